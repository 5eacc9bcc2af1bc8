// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/AdaptationGate.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {

void AdaptationGate::prepare(const AdaptationGateSettings& settings)
{
    if (!(settings.gainMemorySegments >= 1.0) || !std::isfinite(settings.minShareDb) || !std::isfinite(settings.initialGainDb)
        || !std::isfinite(settings.minAboveFloorDb) || !(settings.floorRiseDbPerSegment >= 0.0))
        throw std::invalid_argument("AdaptationGate: bad settings");
    settings_ = settings;
    minShare_ = std::pow(10.0, settings.minShareDb / 10.0);
    converged_ = std::pow(10.0, settings.convergedDb / 10.0);
    initialGain_ = std::pow(10.0, settings.initialGainDb / 10.0);
    averaging_ = 1.0 / settings.gainMemorySegments;
    minAboveFloor_ = std::pow(10.0, settings.minAboveFloorDb / 10.0);
    floorRise_ = std::pow(10.0, settings.floorRiseDbPerSegment / 10.0);
    reset();
}

void AdaptationGate::reset()
{
    gain_ = initialGain_;
    floor_ = -1.0;
    gainMeasured_ = false;
    paused_ = 0;
}

double AdaptationGate::echoGainDb() const { return 10.0 * std::log10(gain_); }

bool AdaptationGate::segment(double micEnergy, double farEnergy, double outEnergy, double estimateEnergy)
{
    if (!(micEnergy > 0.0))
        return true;   // a silent microphone: nothing to learn wrongly either way
    if (farEnergy > 0.0 && micEnergy >= converged_ * outEnergy && estimateEnergy > 0.0) {
        // The foreground cancels: its estimate is the echo. Averaged in dB, so a loud segment does not
        // outweigh the rest.
        const double measured = std::log(estimateEnergy / farEnergy), current = std::log(gain_);
        gain_ = std::exp(current + averaging_ * (measured - current));
        gainMeasured_ = true;
    }
    floor_ = floor_ < 0.0 ? micEnergy : std::min(floor_ * floorRise_, micEnergy);
    const double possibleEcho = gain_ * farEnergy;
    const bool adapt = possibleEcho >= minShare_ * micEnergy && (gainMeasured_ || possibleEcho >= minAboveFloor_ * floor_);
    if (!adapt)
        ++paused_;
    return adapt;
}

} // namespace quell::aec
