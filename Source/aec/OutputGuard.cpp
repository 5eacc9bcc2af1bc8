// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/OutputGuard.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace quell::aec {

void OutputGuard::prepare(const OutputGuardSettings& s, const dsp::ProcessSpec& spec)
{
    const int sampleRate = spec.sampleRate;
    if (sampleRate <= 0 || !(s.shortSeconds > 0.0) || !(s.longSeconds > 0.0) || !(s.crossfadeSeconds > 0.0)
        || !(s.holdSeconds >= 0.0) || !(s.shortDb >= 0.0) || !(s.longDb >= 0.0) || !(s.clearDb >= 0.0))
        throw std::invalid_argument("OutputGuard: bad settings");
    shortA_ = std::exp(-1.0 / (s.shortSeconds * sampleRate));
    longA_ = std::exp(-1.0 / (s.longSeconds * sampleRate));
    shortRatio_ = std::pow(10.0, s.shortDb / 10.0);
    longRatio_ = std::pow(10.0, s.longDb / 10.0);
    clearRatio_ = std::pow(10.0, -s.clearDb / 10.0);
    step_ = static_cast<float>(1.0 / std::max(1.0, s.crossfadeSeconds * sampleRate));
    holdSamples_ = static_cast<int>(std::lround(s.holdSeconds * sampleRate));
    reset();
}

void OutputGuard::reset()
{
    shortOut_ = shortMic_ = longOut_ = longMic_ = 0.0;
    mix_ = 0.0f;
    quiet_ = 0;
    active_ = false;
    fallbackSamples_ = 0;
}

void OutputGuard::process(std::span<const float> mic, std::span<float> out)
{
    if (out.size() != mic.size())
        throw std::invalid_argument("OutputGuard::process: lengths differ");
    for (std::size_t n = 0; n < mic.size(); ++n) {
        const double d = mic[n], e = out[n];
        shortOut_ = shortA_ * shortOut_ + (1.0 - shortA_) * e * e;
        shortMic_ = shortA_ * shortMic_ + (1.0 - shortA_) * d * d;
        longOut_ = longA_ * longOut_ + (1.0 - longA_) * e * e;
        longMic_ = longA_ * longMic_ + (1.0 - longA_) * d * d;
        // (The long average is stale once the output is well below the microphone now.)
        const bool louder = shortOut_ > shortRatio_ * shortMic_
                            || (longOut_ > longRatio_ * longMic_ && shortOut_ > 0.5 * shortMic_);
        if (louder) {
            active_ = true;
            quiet_ = 0;
        } else if (active_ && (shortOut_ <= clearRatio_ * shortMic_ || (shortOut_ <= shortMic_ && ++quiet_ >= holdSamples_))) {
            // No louder than the microphone again: a filter re-converged after a path change, or the far
            // end resumed after a pause in which the output was the microphone itself (the filter had
            // nothing to subtract, and its slightest addition looked louder). Clearly below it (10 dB),
            // the output is cancelling: let go at once, or the echo's first milliseconds of every phrase
            // after a pause are the microphone's (measured: 1 s of fallback in 12 s of a corpus call).
            // The long average still remembers the loud output for tens of milliseconds, and would hold
            // the microphone on that long for nothing; it restarts from the short one's ratio.
            active_ = false;
            quiet_ = 0;
            longOut_ = std::min(longOut_, shortOut_ / std::max(shortMic_, 1e-30) * longMic_);
        } else if (shortOut_ > shortMic_) {
            quiet_ = 0;
        }
        mix_ = active_ ? std::min(1.0f, mix_ + step_) : std::max(0.0f, mix_ - step_);
        if (mix_ > 0.0f) {
            // Raised-cosine weights: the crossfade keeps the sum's power where the two are uncorrelated.
            const float w = 0.5f - 0.5f * std::cos(std::numbers::pi_v<float> * mix_);
            out[n] = (1.0f - w) * out[n] + w * mic[n];
            ++fallbackSamples_;
        }
    }
}

} // namespace quell::aec
