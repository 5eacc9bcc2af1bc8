// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/EchoToNoiseMeter.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {

EchoToNoiseMeter::EchoToNoiseMeter(const EchoToNoiseSettings& settings) : settings_(settings)
{
    if (!(settings.segmentSeconds > 0.0) || !(settings.highAboveDb >= settings.lowBelowDb) || !(settings.holdSeconds >= 0.0)
        || !(settings.floorRiseDbPerSecond > 0.0) || !(settings.echoSeconds > 0.0))
        throw std::invalid_argument("EchoToNoiseMeter: bad settings");
    floorRise_ = std::pow(10.0, settings.floorRiseDbPerSecond * settings.segmentSeconds / 10.0);
    echoAveraging_ = std::min(1.0, settings.segmentSeconds / settings.echoSeconds);
    holdSegments_ = std::max(1, static_cast<int>(std::lround(settings.holdSeconds / settings.segmentSeconds)));
    reset();
}

void EchoToNoiseMeter::reset()
{
    error_ = floor_ = echo_ = 0.0;
    farPlay_.reset();
    errorSegments_ = echoSegments_ = 0;
    belowRun_ = 0;
    low_ = false;
}

bool EchoToNoiseMeter::known() const
{
    return echoSegments_ > 0 && floor_ > 0.0 && echo_ > 0.0;
}

double EchoToNoiseMeter::db() const
{
    return known() ? 10.0 * std::log10(echo_ / floor_) : 0.0;
}

void EchoToNoiseMeter::addSegment(double farEnergy, double echoEnergy, double errorEnergy)
{
    if (!std::isfinite(farEnergy) || !std::isfinite(echoEnergy) || !std::isfinite(errorEnergy))
        return;
    // Only an error with some power moves the floor: a digitally silent microphone (zeros through the
    // high-pass, an error of exactly 0) would pin a minimum at 0, which no rise lifts.
    if (errorEnergy > 0.0) {
        ++errorSegments_;
        // Three segments' smoothing: one segment of noise spreads by tens of per cent, and the minimum of
        // many such would sit several dB under the noise.
        error_ = errorSegments_ == 1 ? errorEnergy : error_ + 0.3 * (errorEnergy - error_);
        floor_ = errorSegments_ == 1 || error_ < floor_ ? error_ : floor_ * floorRise_;
    }
    // Where the far end does not play, the echo estimate is its reverberation or nothing.
    if (!farPlay_.update(farEnergy))
        return;
    ++echoSegments_;
    echo_ += std::max(echoAveraging_, 1.0 / static_cast<double>(echoSegments_)) * (echoEnergy - echo_);
    if (!known())
        return;   // no verdict without both powers
    const double ratio = db();
    if (ratio > settings_.highAboveDb) {
        low_ = false;
        belowRun_ = 0;
    } else if (ratio < settings_.lowBelowDb) {
        belowRun_ = std::min(belowRun_ + 1, holdSegments_);
        if (belowRun_ >= holdSegments_)
            low_ = true;
    } else {
        belowRun_ = 0;
    }
}

} // namespace quell::aec
