// SPDX-License-Identifier: GPL-3.0-or-later
// AlignmentShift: the weight energy a move of the far end's alignment would push out of the filter,
// and the refusal of such moves while the filter cancels; and EchoCanceller keeping an echo path whose
// strongest part comes after a weaker direct path where it is.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "aec/AlignmentShift.h"
#include "aec/EchoCanceller.h"
#include "support/Signals.h"

using namespace quell;

TEST_CASE("AlignmentShift measures the weight energy a move pushes out of the filter", "[aec][delay]")
{
    std::vector<float> w(256, 0.0f);
    w[14] = 0.5f;    // direct path: 0.25 of 1.25
    w[100] = 1.0f;
    w[250] = 0.0f;
    CHECK(aec::AlignmentShift::lostEnergyFraction(w, 1, 10) == 0.0);
    CHECK(aec::AlignmentShift::lostEnergyFraction(w, 1, 15) == Approx(0.2));
    CHECK(aec::AlignmentShift::lostEnergyFraction(w, 1, 101) == Approx(1.0));
    // Delayed less: the path moves away from tap 0 and the last taps fall off.
    CHECK(aec::AlignmentShift::lostEnergyFraction(w, 1, -155) == 0.0);
    CHECK(aec::AlignmentShift::lostEnergyFraction(w, 1, -156) == Approx(0.8));
    // Two far-end channels, blocks of 128: the shift applies to each.
    std::vector<float> w2(256, 0.0f);
    w2[5] = 1.0f;          // channel 0
    w2[128 + 50] = 1.0f;   // channel 1
    CHECK(aec::AlignmentShift::lostEnergyFraction(w2, 2, 6) == Approx(0.5));
    CHECK(aec::AlignmentShift::lostEnergyFraction(w2, 2, 51) == Approx(1.0));
    CHECK(aec::AlignmentShift::lostEnergyFraction(w2, 2, -78) == Approx(0.5));
    CHECK(aec::AlignmentShift::lostEnergyFraction(w2, 2, -77) == 0.0);
    CHECK(aec::AlignmentShift::lostEnergyFraction(std::vector<float>(64, 0.0f), 1, 10) == 0.0);
}

TEST_CASE("AlignmentShift refuses a move that cuts the path only while the filter cancels", "[aec][delay]")
{
    aec::AlignmentShift a;
    a.prepare({});
    std::vector<float> w(256, 0.0f);
    w[14] = 0.5f;
    w[100] = 1.0f;
    CHECK_FALSE(a.cancelling());
    CHECK(a.allows(w, 1, 36));   // no evidence yet: the estimator decides
    // Segments with a playing far end and 20 dB of reduction.
    for (int i = 0; i < 50; ++i)
        a.segment(1.0, 0.01, 1.0, 160);
    CHECK(a.cancelling());
    CHECK_FALSE(a.allows(w, 1, 36));   // would lose the direct path: 20 % of the energy
    CHECK(a.allows(w, 1, 10));         // loses nothing
    // Silent far-end segments say nothing, however loud the output.
    for (int i = 0; i < 200; ++i)
        a.segment(1.0, 10.0, 0.0, 160);
    CHECK(a.cancelling());
    // After a real change of the path the output is as loud as the microphone: moves go ahead.
    for (int i = 0; i < 200; ++i)
        a.segment(1.0, 1.0, 1.0, 160);
    CHECK_FALSE(a.cancelling());
    CHECK(a.allows(w, 1, 36));
    CHECK_THROWS_AS(a.prepare({.memorySegments = 0.0}), std::invalid_argument);
}

TEST_CASE("EchoCanceller keeps a direct path that is weaker than a later reflection", "[aec][delay]")
{
    // The echo's strongest part 100 samples (6 ms) in, a direct path at 14 samples with a quarter of
    // its amplitude: the delay estimator finds the reflection, and moving the far end by it (less the
    // 4 ms margin) would put the direct path before tap 0 (ERLE at most 12 dB). Within half the filter
    // the alignment stays.
    constexpr int kRate = 16000;
    const std::size_t n = 5 * kRate;
    const auto c = test::colouredNoise(n, 71, 0.05);
    const std::vector<float> x(c.begin(), c.end());
    std::vector<double> path(200, 0.0);
    path[14] = 0.25;
    path[100] = 1.0;
    path[120] = -0.3;
    const std::vector<double> xd(x.begin(), x.end());
    const auto y = test::convolve(std::span<const double>(xd), std::span<const double>(path));
    const auto noise = test::whiteNoise(n, 72, 1e-4);
    std::vector<float> m(n);
    for (std::size_t i = 0; i < n; ++i)
        m[i] = static_cast<float>(y[i] + noise[i]);

    // 256 taps: the reflection lies within half the filter, no move is proposed. 128 taps: it lies
    // beyond, the move is proposed once the filter cancels, and AlignmentShift refuses it.
    const int taps = GENERATE(256, 128);
    aec::EchoCancellerSettings s;
    s.taps = taps;
    s.backend = aec::Backend::Cpu;
    s.cpuThreads = 1;
    s.suppressor.enabled = false;   // the linear filter's own reduction
    aec::EchoCanceller canceller;
    canceller.prepare(s, {.maximumBlockSize = 160});
    std::vector<float> out(n);
    for (std::size_t p = 0; p < n; p += 160)
        canceller.process(std::span(m).subspan(p, 160), std::span(x).subspan(p, 160), std::span(out).subspan(p, 160));
    const double erle = test::reductionDb(std::span(m).last(kRate), std::span(out).last(kRate));
    INFO(taps << " taps: ERLE over the last second " << erle << " dB, alignment " << canceller.alignedDelaySamples()
              << ", moves refused " << canceller.refusedAlignmentMoves());
    CHECK(canceller.alignedDelaySamples() == 0);
    CHECK(erle > 30.0);
    if (taps == 128)
        CHECK(canceller.refusedAlignmentMoves() > 0);
}
