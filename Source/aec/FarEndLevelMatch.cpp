// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FarEndLevelMatch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace quell::aec {

void FarEndLevelMatch::prepare(double automaticDelta, const FarEndLevelMatchSettings& s)
{
    if (!(automaticDelta > 0.0) || !std::isfinite(automaticDelta) || !std::isfinite(s.referenceDbfs)
        || !(s.maxReductionDb >= 0.0 && s.maxReductionDb <= 60.0) || !(s.restartDb >= 0.0) || !std::isfinite(s.echoShownDb)
        || s.minLearntSegments < 1 || !(s.peakDecayPerSegment > 0.0 && s.peakDecayPerSegment <= 1.0) || !(s.stepDb > 0.0))
        throw std::invalid_argument("FarEndLevelMatch: bad settings");
    settings_ = s;
    automaticDelta_ = automaticDelta;
    reference_ = std::pow(10.0, s.referenceDbfs / 10.0);
    minScale_ = std::pow(10.0, -s.maxReductionDb / 10.0);
    restartScale_ = std::pow(10.0, -s.restartDb / 10.0);
    echoShown_ = std::pow(10.0, s.echoShownDb / 10.0);
    step_ = std::pow(10.0, s.stepDb / 10.0);
    reset();
}

void FarEndLevelMatch::reset()
{
    delta_ = automaticDelta_;
    peak_ = 0.0;
    learnt_ = 0;
    echoSeen_ = matched_ = false;
}

double FarEndLevelMatch::levelDbfs() const
{
    return peak_ > 0.0 ? 10.0 * std::log10(peak_) : -std::numeric_limits<double>::infinity();
}

FarEndLevelMatch::Decision FarEndLevelMatch::segment(const Segment& s)
{
    if (!s.learnt || !std::isfinite(s.farPower) || !(s.farPower >= 0.0))
        return {};
    peak_ = std::max(s.farPower, peak_ * settings_.peakDecayPerSegment);
    ++learnt_;
    echoSeen_ = echoSeen_ || (s.outEnergy > 0.0 && s.micEnergy >= echoShown_ * s.outEnergy);
    if (!echoSeen_ || learnt_ < settings_.minLearntSegments || !(peak_ > 0.0))
        return {};
    const double wanted = automaticDelta_ * std::clamp(peak_ / reference_, minScale_, 1.0);
    if (!matched_) {
        matched_ = true;
        if (wanted > automaticDelta_ * restartScale_)
            return {};
        delta_ = wanted;
        return {true, true};
    }
    if (wanted > delta_ * step_ || wanted < delta_ / step_) {
        delta_ = wanted;
        return {true, false};
    }
    return {};
}

} // namespace quell::aec
