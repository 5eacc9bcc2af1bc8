// SPDX-License-Identifier: GPL-3.0-or-later
// The echo canceller's output and decisions do not depend on how its input is split into calls: a call
// that crosses a foreground segment's end runs the adaptive filter once over both sides
// (EchoCanceller::processAcrossSegmentEnd), a call of one sample never does, and both give the same bits.
#include <catch2/catch.hpp>

#include "support/CancellerCallSplit.h"

using namespace quell;

TEST_CASE("Echo canceller: the same samples and decisions in calls of any size, across a path change", "[aec][twopath][pathchange]")
{
    // Two-path, the path-change restart, the loudspeaker distortion stage and the suppressor all on.
    aec::EchoCancellerSettings s;
    s.taps = 256;
    s.backend = aec::Backend::Cpu;
    s.cpuThreads = 1;
    s.maxDelaySeconds = 0.0;
    s.distortionFilter = true;
    REQUIRE(s.twoPath);
    REQUIRE(s.restartOnPathChange);
    test::checkEveryCallSplit(s, 66);
}

TEST_CASE("Echo canceller: the Kalman filter gives the same samples in calls of any size", "[aec][twopath][kalman]")
{
    aec::EchoCancellerSettings s;
    s.taps = 256;
    s.backend = aec::Backend::Cpu;
    s.filter = aec::FilterKind::Kalman;
    s.maxDelaySeconds = 0.0;
    test::checkEveryCallSplit(s, 68);
}

TEST_CASE("Echo canceller: a path change concluded inside a call reaches the suppressor at its sample", "[aec][twopath][pathchange]")
{
    // Every default (alignment, suppressor, path-change restart): a coloured far end through a 20 ms path,
    // a near end of coloured noise from 0.75 s that the detector takes for a path change. Told of it at
    // a call's end, the suppressor once dropped its reach for the call's earlier frames too: calls of
    // 4096 and of 160 samples parted from 0.8 s on.
    const std::size_t n = 24000;
    const std::vector<double> x = test::colouredNoise(n, 2, 0.1);
    const std::vector<double> y = test::convolve(x, test::randomSystem(320, 12, 80.0));
    const std::vector<double> noise = test::whiteNoise(n, 22, 1e-4), near = test::colouredNoise(n, 32, 0.05);
    std::vector<float> far = test::cast<float>(x), mic(n);
    for (std::size_t i = 0; i < n; ++i)
        mic[i] = static_cast<float>(0.5 * y[i] + noise[i] + (i > n / 2 && i < 3 * n / 4 ? near[i] : 0.0));
    aec::EchoCancellerSettings s;
    s.taps = 1024;
    s.backend = aec::Backend::Cpu;
    s.filter = aec::FilterKind::Rls;
    s.cpuThreads = 1;
    std::vector<float> reference;
    for (const std::size_t call : {std::size_t{1}, std::size_t{160}, std::size_t{1000}, std::size_t{4096}}) {
        aec::EchoCanceller c;
        c.prepare(s, {16000, 4096, 1});
        std::vector<float> out(n);
        for (std::size_t at = 0; at < n; at += call) {
            const std::size_t len = std::min(call, n - at);
            c.process(std::span<const float>(mic).subspan(at, len), std::span<const float>(far).subspan(at, len),
                      std::span<float>(out).subspan(at, len));
        }
        INFO("calls of " << call);
        CHECK(c.pathChangeRestarts() >= 1);   // the case this test is about
        if (reference.empty())
            reference = out;
        else
            CHECK(std::memcmp(out.data(), reference.data(), n * sizeof(float)) == 0);
    }
}
