// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A white far end through a room at a chosen level, for the CPU and GPU tests of the canceller's level
// match (Tests/cpu/FarEndLevelMatchTests.cpp, Tests/gpu/GpuFarEndLevelMatchTests.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "aec/EchoCanceller.h"
#include "support/CancelWhole.h"
#include "support/Signals.h"

namespace quell::test {

// `settings` without the suppressor (no added latency: the output lines up with the microphone).
inline std::vector<float> cancelLinear(aec::EchoCancellerSettings settings, std::span<const float> mic, std::span<const float> ref)
{
    settings.suppressor.enabled = false;
    aec::EchoCanceller canceller;
    canceller.prepare(settings, {.maximumBlockSize = 160});
    REQUIRE(canceller.latencySamples() == 0);
    return cancelWhole(canceller, mic, ref, 160);
}

// The linear filter's echo reduction (dB) from 1 s to 5 s of a white far end at farRms through a room,
// with noise 35 dB under the echo, no suppressor, so the figure is the filter's (the eval's steady ERLE
// is taken from 1 s on as well).
inline double quietFarEndReductionDb(const aec::EchoCancellerSettings& settings, double farRms)
{
    constexpr int rate = 16000;
    const std::size_t n = 5 * rate, from = rate;
    const auto far = whiteNoise(n, 91, farRms);
    auto room = randomSystem(2400, 92, 2400.0 / 6.9);
    const auto echo = convolve(std::span<const double>(far), std::span<const double>(room));
    const auto noise = whiteNoise(n, 93, farRms * std::pow(10.0, -35.0 / 20.0));
    std::vector<float> mic(n), ref(n);
    for (std::size_t i = 0; i < n; ++i) {
        mic[i] = static_cast<float>(echo[i] + noise[i]);
        ref[i] = static_cast<float>(far[i]);
    }
    const auto out = cancelLinear(settings, mic, ref);
    return reductionDb(std::span<const float>(mic).subspan(from, n - from), std::span<const float>(out).subspan(from, n - from));
}

} // namespace quell::test
