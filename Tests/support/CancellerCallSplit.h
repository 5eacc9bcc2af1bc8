// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The echo canceller over one scene in calls of given sizes, for the tests that its output and
// decisions do not depend on the split (CPU: Tests/cpu/EchoCancellerCallSplitTests.cpp; GPU:
// Tests/gpu/GpuCancellerCallSplitTests.cpp). The scene: 2 s of white far end at 16 kHz, the echo path
// (200 taps) changing at 1 s, a near end talking from 1.5 to 1.7 s, noise at -80 dB.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "aec/EchoCanceller.h"
#include "support/Signals.h"

namespace quell::test {

struct CallSplitScene {
    static constexpr std::size_t samples = 32000, change = 16000;
    std::vector<float> mic, far;
};

inline CallSplitScene makeCallSplitScene()
{
    const std::size_t n = CallSplitScene::samples;
    const auto xd = whiteNoise(n, 21, 0.1);
    const auto h1 = randomSystem(200, 22, 0.97), h2 = randomSystem(200, 23, 0.97);
    const auto y1 = convolve(std::span<const double>(xd), std::span<const double>(h1));
    const auto y2 = convolve(std::span<const double>(xd), std::span<const double>(h2));
    const auto near = whiteNoise(n, 64, 0.03), noise = whiteNoise(n, 24, 1e-4);
    CallSplitScene s;
    s.far.assign(xd.begin(), xd.end());
    s.mic.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        s.mic[i] = static_cast<float>((i < CallSplitScene::change ? y1[i] : y2[i]) + (i >= 24000 && i < 27200 ? near[i] : 0.0) + noise[i]);
    return s;
}

struct CallSplitRun {
    std::vector<float> out;
    long restarts = 0, copies = 0, rejected = 0;
};

// calls cycled; maximumBlockSize 700.
inline CallSplitRun runInCalls(const aec::EchoCancellerSettings& settings, const CallSplitScene& scene, const std::vector<std::size_t>& calls)
{
    aec::EchoCanceller canceller;
    canceller.prepare(settings, {.maximumBlockSize = 700});
    const std::size_t n = scene.mic.size();
    CallSplitRun r;
    r.out.assign(n, 0.0f);
    for (std::size_t pos = 0, k = 0; pos < n; ++k) {
        const std::size_t len = std::min(n - pos, calls[k % calls.size()]);
        canceller.process(std::span(scene.mic).subspan(pos, len), std::span(scene.far).subspan(pos, len), std::span(r.out).subspan(pos, len));
        pos += len;
    }
    r.restarts = canceller.pathChangeRestarts();
    r.copies = canceller.foregroundCopies();
    r.rejected = canceller.rejectedForegroundCopies();
    return r;
}

// The canceller in calls of one sample (which never cross a segment's end with samples behind them:
// the reference), then in calls of 43, 333 and 700 samples and of random sizes from 1 to 700: the same
// bits, path-change restarts, foreground copies and rejected snapshots. The reference must restart once
// after the path change, copy, and cancel before it.
inline void checkEveryCallSplit(const aec::EchoCancellerSettings& settings, std::uint32_t seed)
{
    const CallSplitScene scene = makeCallSplitScene();
    std::mt19937 rng(seed);
    std::vector<std::size_t> random;
    for (int i = 0; i < 100; ++i)
        random.push_back(std::uniform_int_distribution<std::size_t>(1, 700)(rng));
    const CallSplitRun one = runInCalls(settings, scene, {1});
    INFO("restarts " << one.restarts << ", copies " << one.copies << ", rejected " << one.rejected);
    CHECK(one.restarts == 1);
    CHECK(one.copies >= 2);
    const std::size_t before = CallSplitScene::change - 4000;
    CHECK(reductionDb(std::span(scene.mic).subspan(before, 4000), std::span(one.out).subspan(before, 4000)) > 20.0);
    const std::vector<std::pair<const char*, std::vector<std::size_t>>> cases{{"43", {43}}, {"333", {333}}, {"700", {700}}, {"random", random}};
    for (const auto& [name, calls] : cases) {
        INFO("calls of " << name);
        const CallSplitRun r = runInCalls(settings, scene, calls);
        CHECK(std::memcmp(r.out.data(), one.out.data(), r.out.size() * sizeof(float)) == 0);
        CHECK(r.restarts == one.restarts);
        CHECK(r.copies == one.copies);
        CHECK(r.rejected == one.rejected);
    }
}

} // namespace quell::test
