// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/ErleMeter.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {

ErleMeter::ErleMeter(int sampleRate, double warmupSeconds, double frameSeconds)
    : warmupSeconds_(warmupSeconds), frameSeconds_(frameSeconds)
{
    if (sampleRate <= 0 || frameSeconds <= 0.0)
        throw std::invalid_argument("ErleMeter: rate and frame length must be positive");
    frameLength_ = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(frameSeconds * sampleRate)));
}

void ErleMeter::add(std::span<const float> mic, std::span<const float> out, std::span<const float> ref)
{
    for (std::size_t i = 0; i < mic.size(); ++i) {
        current_.mic += static_cast<double>(mic[i]) * mic[i];
        current_.out += static_cast<double>(out[i]) * out[i];
        current_.ref += static_cast<double>(ref[i]) * ref[i];
        if (++inCurrent_ == frameLength_) {
            frames_.push_back(current_);
            current_ = {};
            inCurrent_ = 0;
        }
    }
}

ErleReport ErleMeter::report() const
{
    ErleReport r;
    r.frameSeconds = frameSeconds_;
    double loudest = 0.0;
    for (const Frame& f : frames_)
        loudest = std::max(loudest, f.ref);
    const double absoluteFloor = 1e-6 * static_cast<double>(frameLength_);   // -60 dBFS
    const double threshold = std::max(absoluteFloor, loudest * 1e-3);        // within 30 dB of the loudest
    const std::size_t warmupFrames = static_cast<std::size_t>(std::ceil(warmupSeconds_ / frameSeconds_));
    double micSum = 0.0, outSum = 0.0;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
        const Frame& f = frames_[i];
        const bool active = f.ref > threshold && f.mic > 0.0;
        if (!active) {
            r.perFrameDb.emplace_back();
            continue;
        }
        const double outPower = std::max(f.out, 1e-20);
        r.perFrameDb.emplace_back(10.0 * std::log10(f.mic / outPower));
        if (i >= warmupFrames) {
            micSum += f.mic;
            outSum += f.out;
            ++r.activeFrames;
        }
    }
    if (r.activeFrames > 0)
        r.steadyStateDb = 10.0 * std::log10(micSum / std::max(outSum, 1e-20));
    return r;
}

} // namespace quell::aec
