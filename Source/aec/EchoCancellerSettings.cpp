// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/EchoCancellerSettings.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace quell::aec {

double automaticLambda(int totalTaps)
{
    const double memory = std::max(10000.0, 10.0 * totalTaps);
    return 1.0 - 1.0 / memory;
}

double effectiveLambda(const EchoCancellerSettings& settings, int farEndChannels)
{
    if (settings.lambda != 0.0)
        return settings.lambda;
    // (taps 0, automatic, is resolved by the filter plan; before that the 64 ms choice's memory stands.)
    return automaticLambda(settings.taps * farEndChannels);
}

double effectiveDelta(const EchoCancellerSettings& settings, int totalTaps)
{
    if (settings.delta != 0.0)
        return settings.delta;
    return totalTaps >= 4096 ? 0.03 : 0.01;
}

void validate(const EchoCancellerSettings& s, const dsp::ProcessSpec& spec)
{
    auto bad = [](const std::string& what) { throw std::invalid_argument("echo canceller: " + what); };
    if (spec.sampleRate < kMinSampleRate || spec.sampleRate > kMaxSampleRate)
        bad("the rate must be between " + std::to_string(kMinSampleRate) + " and " + std::to_string(kMaxSampleRate)
            + " Hz (got " + std::to_string(spec.sampleRate) + ")");
    if (spec.channels < 1 || spec.channels > kMaxFarEndChannels)
        bad("the far end may have 1 or 2 channels (got " + std::to_string(spec.channels) + ")");
    if (spec.maximumBlockSize == 0)
        bad("the most samples per call must be positive");
    if (s.taps != 0 && (s.taps < kMinTaps || s.taps > kMaxTaps))
        bad("the filter length must be 0 (automatic) or " + std::to_string(kMinTaps) + " to " + std::to_string(kMaxTaps)
            + " taps per far-end channel (got " + std::to_string(s.taps) + ")");
    if (s.lambda != 0.0 && !(s.lambda >= 0.9 && s.lambda <= 1.0))
        bad("lambda must be 0 (automatic) or lie in [0.9, 1] (got " + std::to_string(s.lambda) + ")");
    if (!(s.delta >= 0.0 && std::isfinite(s.delta)))
        bad("delta must be 0 (automatic) or positive (got " + std::to_string(s.delta) + ")");
    if (!(s.maxDelaySeconds >= 0.0 && s.maxDelaySeconds <= kMaxDelaySeconds) || !(s.alignMarginSeconds >= 0.0))
        bad("maxDelaySeconds must be in [0, " + std::to_string(static_cast<int>(kMaxDelaySeconds))
            + "] and alignMarginSeconds >= 0");
    if (s.kalmanBlockSize != 0
        && (s.kalmanBlockSize < 16 || s.kalmanBlockSize > 4096 || (s.kalmanBlockSize & (s.kalmanBlockSize - 1)) != 0))
        bad("the Kalman filter's block must be 0 (automatic) or a power of two from 16 to 4096 (got "
            + std::to_string(s.kalmanBlockSize) + ")");
    if (!(s.cpuRealtimeBudget >= 0.0))
        bad("cpuRealtimeBudget must be >= 0");
}

} // namespace quell::aec
