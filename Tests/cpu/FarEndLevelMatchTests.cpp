// SPDX-License-Identifier: GPL-3.0-or-later
// FarEndLevelMatch: RLS's delta follows a quiet far end's level once the echo is known to be real, so a
// far end 20 dB under speech level converges as a loud one does, while a faint line that makes no echo
// keeps the fixed prior that keeps the near end out of the weights. And the filters' restart delta
// (dsp::FastRls, dsp::Rls) that it sets.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "aec/EchoCanceller.h"
#include "aec/FarEndLevelMatch.h"
#include "dsp/FastRls.h"
#include "dsp/Rls.h"
#include "support/QuietFarEndScene.h"
#include "support/Signals.h"

using namespace quell;

namespace {

double powerOf(double dbfs) { return std::pow(10.0, dbfs / 10.0); }

aec::FarEndLevelMatch::Segment learntSegment(double farDbfs, double reductionDb)
{
    aec::FarEndLevelMatch::Segment s;
    s.farPower = powerOf(farDbfs);
    s.micEnergy = 1.0;
    s.outEnergy = powerOf(-reductionDb);
    s.learnt = true;
    return s;
}

} // namespace

TEST_CASE("The level match waits for a cancelling filter and enough of the far end, then scales delta once with a restart",
          "[aec][levelmatch]")
{
    aec::FarEndLevelMatch match;
    match.prepare(0.03);   // a -24 dBFS peak reference, at most 20 dB down, a restart from 6 dB down, after 10 learnt segments
    // A far end at -38 dBFS with no echo shown (the output as loud as the microphone): no decision at all.
    for (int i = 0; i < 200; ++i) {
        const auto d = match.segment(learntSegment(-38.0, 0.0));
        REQUIRE_FALSE(d.newDelta);
    }
    CHECK_FALSE(match.matched());
    CHECK(match.delta() == 0.03);
    CHECK(match.levelDbfs() == Approx(-38.0).margin(1e-9));

    // The echo shown (3 dB) on the 5th learnt segment, but the level is only trusted from the 10th.
    match.reset();
    CHECK(match.levelDbfs() == -std::numeric_limits<double>::infinity());
    for (int i = 1; i < 10; ++i) {
        const auto d = match.segment(learntSegment(-38.0, i == 5 ? 3.5 : 1.0));
        REQUIRE_FALSE(d.newDelta);
    }
    // Segments the filter did not learn from count for nothing, however loud.
    for (int i = 0; i < 10; ++i) {
        auto s = learntSegment(0.0, 30.0);
        s.learnt = false;
        REQUIRE_FALSE(match.segment(s).newDelta);
    }
    const auto first = match.segment(learntSegment(-38.0, 0.0));
    CHECK(first.newDelta);
    CHECK(first.restart);
    CHECK(match.matched());
    CHECK(match.delta() == Approx(0.03 * powerOf(-14.0)).epsilon(1e-9));

    // Then delta follows the level without restarting, in steps of 3 dB: a peak 2 dB higher changes
    // nothing, one 8 dB higher moves it at once.
    for (int i = 0; i < 5; ++i) {
        const auto d = match.segment(learntSegment(-36.0, 10.0));
        REQUIRE_FALSE(d.newDelta);
    }
    const auto louder = match.segment(learntSegment(-30.0, 10.0));
    CHECK(louder.newDelta);
    CHECK_FALSE(louder.restart);
    CHECK(match.delta() == Approx(0.03 * powerOf(-6.0)).epsilon(1e-9));
    // The peak decays (about 4.4 dB a second of 10 ms segments) when the far end falls quieter: 20 dB down
    // for 2 s takes delta down by steps, never with a restart.
    int steps = 0;
    for (int i = 0; i < 200; ++i) {
        const auto d = match.segment(learntSegment(-50.0, 10.0));
        CHECK_FALSE(d.restart);
        steps += d.newDelta ? 1 : 0;
    }
    CHECK(steps >= 2);
    CHECK(match.delta() < 0.03 * powerOf(-6.0 - 6.0));
}

TEST_CASE("The level match keeps the automatic delta near the reference and bounds its reduction", "[aec][levelmatch]")
{
    aec::FarEndLevelMatch match;
    match.prepare(0.01);
    // 4 dB under the reference: under the 6 dB that pays for a restart, so none comes; delta follows the
    // level for later restarts.
    bool newDelta = false;
    for (int i = 0; i < 100; ++i) {
        const auto d = match.segment(learntSegment(-28.0, 10.0));
        REQUIRE_FALSE(d.restart);
        newDelta = newDelta || d.newDelta;
    }
    CHECK(match.matched());
    CHECK(newDelta);
    CHECK(match.delta() == Approx(0.01 * powerOf(-4.0)).epsilon(1e-9));
    // A far end louder than the reference never raises delta above the automatic one.
    match.reset();
    for (int i = 0; i < 100; ++i)
        REQUIRE_FALSE(match.segment(learntSegment(-10.0, 10.0)).newDelta);
    CHECK(match.delta() == 0.01);
    // A far end at -70 dBFS: 20 dB down at most.
    match.reset();
    bool restarted = false;
    for (int i = 0; i < 100; ++i)
        restarted = match.segment(learntSegment(-70.0, 10.0)).restart || restarted;
    CHECK(restarted);
    CHECK(match.delta() == Approx(0.01 * powerOf(-20.0)).epsilon(1e-9));
    // Learnt segments of a digitally silent far end never make a level.
    match.reset();
    for (int i = 0; i < 100; ++i) {
        auto silent = learntSegment(-30.0, 10.0);
        silent.farPower = 0.0;
        REQUIRE_FALSE(match.segment(silent).newDelta);
    }
    CHECK_FALSE(match.matched());

    aec::FarEndLevelMatchSettings bad;
    bad.peakDecayPerSegment = 1.5;
    CHECK_THROWS_AS(match.prepare(0.01, bad), std::invalid_argument);
    CHECK_THROWS_AS(match.prepare(0.0), std::invalid_argument);
}

TEST_CASE("A restart delta set on the RLS filters is the delta they start from after restarting, until reset",
          "[aec][levelmatch][dsp][rls]")
{
    // A filter prepared with delta 0.03, told 0.001 and restarted before any sample, gives the samples of
    // one prepared with 0.001; after reset() those of one prepared with 0.03 again.
    const std::size_t n = 6000;
    const auto farEnd = test::colouredNoise(n, 7, 0.02);
    const auto far = test::cast<float>(std::span<const double>(farEnd));
    std::vector<float> mic(n);
    const auto path = test::randomSystem(64, 8, 20.0);
    const auto echo = test::convolve(std::span<const double>(farEnd), std::span<const double>(path));
    for (std::size_t i = 0; i < n; ++i)
        mic[i] = static_cast<float>(echo[i]) + 1e-4f * static_cast<float>(i % 7);
    auto settings = [](double delta) {
        dsp::RlsSettings s;
        s.tapsPerChannel = 96;
        s.lambda = 0.9995;
        s.delta = delta;
        return s;
    };
    auto run = [&](auto& filter) {
        std::vector<float> out(n);
        filter.process(mic, far, out);
        return out;
    };
    // One filter told 0.001 and restarted, one prepared with it, one prepared with 0.03 (for after reset).
    auto check = [&](auto& told, auto& small, auto& big) {
        told.prepare(settings(0.03));
        small.prepare(settings(0.001));
        big.prepare(settings(0.03));
        told.setRestartDelta(0.001);
        told.restartCovariance();
        CHECK(run(told) == run(small));
        told.reset();
        CHECK(run(told) == run(big));
        CHECK_THROWS_AS(told.setRestartDelta(-1.0), std::invalid_argument);
        CHECK_THROWS_AS(told.setRestartDelta(std::nan("")), std::invalid_argument);
    };
    SECTION("fast RLS")
    {
        dsp::FastRls told, small, big;
        check(told, small, big);
    }
    SECTION("RLS, with its trace bound")
    {
        dsp::Rls<float> told, small, big;
        check(told, small, big);
    }
}

namespace {

aec::EchoCancellerSettings cpuDefaults()
{
    aec::EchoCancellerSettings s;
    s.backend = aec::Backend::Cpu;
    return s;
}

} // namespace

TEST_CASE("A far end 20 dB under speech level is cancelled about as deeply as one at speech level", "[aec][levelmatch]")
{
    // At -26 dBFS (the level delta was chosen at) and at -46: before the level match the quiet one fell
    // far short (here 34.6 against 20.7 dB; the corpus's white far end: 40.7 against 23.4 dB of steady
    // ERLE); with it 34.6 and 34.0.
    const double loud = test::quietFarEndReductionDb(cpuDefaults(), 0.05), quiet = test::quietFarEndReductionDb(cpuDefaults(), 0.005);
    INFO("echo reduction from 1 s to 5 s: far end at -26 dBFS " << loud << " dB, at -46 dBFS " << quiet << " dB");
    CHECK(loud > 30.0);
    CHECK(quiet > loud - 3.0);
}

TEST_CASE("A faint line that makes no echo keeps the fixed prior: the near end is not learnt into the weights",
          "[aec][levelmatch]")
{
    // A talking near end (coloured noise at about -30 dBFS) over a far end that carries only a line's
    // coloured noise at about -50 dBFS and no echo path (a headset): the output is the microphone within
    // the linear filter's reach, as it is with no far end at all.
    constexpr int rate = 16000;
    const std::size_t n = 8 * rate;
    const auto nearEnd = test::colouredNoise(n, 71, 0.3);
    const auto line = test::colouredNoise(n, 72, 0.003);
    const auto noise = test::whiteNoise(n, 73, 1e-3);
    std::vector<float> mic(n), ref(n);
    for (std::size_t i = 0; i < n; ++i) {
        mic[i] = static_cast<float>(nearEnd[i] + noise[i]);
        ref[i] = static_cast<float>(line[i]);
    }
    // What the canceller took from the microphone, against a run with a silent far end (the high-pass
    // and nothing else).
    const auto out = test::cancelLinear(cpuDefaults(), mic, ref);
    const auto alone = test::cancelLinear(cpuDefaults(), mic, std::vector<float>(n, 0.0f));
    std::vector<float> lost(n - rate);
    for (std::size_t i = 0; i < lost.size(); ++i)
        lost[i] = alone[rate + i] - out[rate + i];
    const double snr = test::reductionDb(std::span<const float>(alone).subspan(rate), lost);
    INFO("near end over what the canceller took from it: " << snr << " dB");
    CHECK(snr > 60.0);
}
