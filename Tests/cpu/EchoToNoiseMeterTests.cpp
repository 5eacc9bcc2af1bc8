// SPDX-License-Identifier: GPL-3.0-or-later
// aec::EchoToNoiseMeter: the echo estimate's power over the error's floor, and its verdict with the
// hysteresis and hold it promises. Fed as the CPU ladder feeds it: 160-sample segments of a far end, a
// filter's echo estimate and its error.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "aec/EchoToNoiseMeter.h"
#include "support/Signals.h"

using namespace quell;

namespace {

constexpr std::size_t kSegment = 160;

double energy(const std::vector<double>& v, std::size_t from)
{
    double sum = 0.0;
    for (std::size_t i = from; i < from + kSegment; ++i)
        sum += v[i] * v[i];
    return sum;
}

// A far end that talks in bursts (`onSeconds` on, `offSeconds` off; white noise when on), its echo as a
// converged filter estimates it (the far end through a decaying path), and an error of white noise
// `enrDb` under the echo's power while the far end plays, plus a residual 30 dB under the echo.
struct Segments {
    std::vector<double> far, echo, error;
};

Segments makeSegments(double seconds, double enrDb, std::uint32_t seed, double onSeconds = 0.6, double offSeconds = 0.3)
{
    const std::size_t n = static_cast<std::size_t>(seconds * 16000.0) / kSegment * kSegment;
    auto far = test::whiteNoise(n, seed, 0.1);
    const std::size_t period = static_cast<std::size_t>((onSeconds + offSeconds) * 16000.0);
    for (std::size_t i = 0; i < n; ++i)
        if (i % period >= static_cast<std::size_t>(onSeconds * 16000.0))
            far[i] = 0.0;
    const auto echo = test::convolve(far, test::randomSystem(200, seed + 1, 40.0));
    double echoPower = 0.0, farPower = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        echoPower += echo[i] * echo[i];
        farPower += far[i] * far[i];
    }
    // The echo's power while the far end plays (onSeconds of every period).
    echoPower /= static_cast<double>(n) * onSeconds / (onSeconds + offSeconds);
    const auto noise = test::whiteNoise(n, seed + 2, std::sqrt(echoPower * std::pow(10.0, -enrDb / 10.0)));
    std::vector<double> error(n);
    for (std::size_t i = 0; i < n; ++i)
        error[i] = noise[i] + echo[i] * std::pow(10.0, -30.0 / 20.0);
    return {far, echo, error};
}

// The meter's ratio and verdict after each segment.
struct Reading {
    std::vector<double> db;
    std::vector<bool> low;
};

Reading feed(aec::EchoToNoiseMeter& meter, const Segments& s)
{
    Reading r;
    for (std::size_t at = 0; at + kSegment <= s.far.size(); at += kSegment) {
        meter.addSegment(energy(s.far, at), energy(s.echo, at), energy(s.error, at));
        r.db.push_back(meter.db());
        r.low.push_back(meter.low());
    }
    return r;
}

} // namespace

TEST_CASE("the echo-to-noise meter reads the ratio within 2 dB and calls 10 dB low, 30 and 40 dB not", "[enr-meter]")
{
    for (const double enr : {10.0, 30.0, 40.0}) {
        CAPTURE(enr);
        aec::EchoToNoiseMeter meter;
        const Reading r = feed(meter, makeSegments(4.0, enr, 5u));
        // The floor is the noise, found in the far end's pauses: the residual 30 dB under the echo (10 dB
        // over the noise at 40 dB ENR) goes with the far end.
        INFO("read " << r.db.back() << " dB");
        CHECK(std::abs(r.db.back() - enr) < 2.0);
        CHECK(r.low.back() == (enr < 20.0));
        // At 30 dB and more the verdict is never low (the echo estimate here has converged from the start);
        // at 10 dB it is low from the first 0.1 s of far end on.
        std::size_t lowSegments = 0;
        for (const bool low : r.low)
            lowSegments += low;
        if (enr < 20.0)
            CHECK(lowSegments > r.low.size() * 9 / 10);
        else
            CHECK(lowSegments == 0);
    }
}

TEST_CASE("the echo-to-noise meter holds its low verdict back for holdSeconds of far end, and drops it within 0.1 s",
          "[enr-meter]")
{
    aec::EchoToNoiseSettings settings;
    settings.holdSeconds = 0.5;
    aec::EchoToNoiseMeter meter(settings);
    // The far end plays throughout: every segment counts.
    const Reading quiet = feed(meter, makeSegments(2.0, 10.0, 9u, 2.0, 0.0));
    std::size_t firstLow = quiet.low.size();
    for (std::size_t i = 0; i < quiet.low.size(); ++i)
        if (quiet.low[i]) {
            firstLow = i;
            break;
        }
    // 50 segments of 10 ms below 20 dB.
    CHECK(firstLow == 49);
    // Then the noise falls 30 dB: the error's floor follows as fast as the error's smoothing over three
    // segments lets it (it is a minimum), the verdict with it.
    Segments clean = makeSegments(0.5, 40.0, 10u, 2.0, 0.0);
    const Reading after = feed(meter, clean);
    std::size_t firstHigh = after.low.size();
    for (std::size_t i = 0; i < after.low.size(); ++i)
        if (!after.low[i]) {
            firstHigh = i;
            break;
        }
    INFO("segments until the verdict is dropped: " << firstHigh);
    CHECK(firstHigh <= 10);
    meter.reset();
    CHECK_FALSE(meter.low());
    CHECK(meter.db() == 0.0);
}

TEST_CASE("the echo-to-noise meter counts only the segments where the far end plays, and ignores bad input",
          "[enr-meter]")
{
    aec::EchoToNoiseMeter meter;
    // A silent far end: no echo estimate to read, no verdict however quiet the echo.
    for (int i = 0; i < 500; ++i)
        meter.addSegment(0.0, 0.0, 1e-6);
    CHECK(meter.db() == 0.0);
    CHECK_FALSE(meter.low());
    // Non-finite energies are skipped (a far end of NaN is sanitised by the filters, not here).
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int i = 0; i < 500; ++i)
        meter.addSegment(nan, 1.0, 1.0);
    CHECK(meter.db() == 0.0);
    CHECK_FALSE(meter.low());
    // A microphone of exact zeros at the start (the error 0) leaves the floor unknown, not pinned at 0:
    // once the noise comes, the ratio is read from it.
    aec::EchoToNoiseMeter silentStart;
    for (int i = 0; i < 300; ++i)
        silentStart.addSegment(1.0, 0.0, 0.0);
    CHECK_FALSE(silentStart.known());
    CHECK_FALSE(silentStart.low());
    for (int i = 0; i < 300; ++i)
        silentStart.addSegment(1.0, 1.0, 1e-3);   // echo 30 dB over the error
    CHECK(silentStart.db() == Approx(30.0).margin(0.1));
    CHECK_FALSE(silentStart.low());
    // The far end's quiet segments (under a quarter of its recent mean) neither count towards the verdict
    // nor break its run: 9 loud segments below 20 dB are not yet the 10 of the hold, with quiet ones between.
    aec::EchoToNoiseMeter sparse;
    for (int i = 0; i < 9; ++i) {
        sparse.addSegment(1.0, 1.0, 0.1);        // 10 dB
        for (int q = 0; q < 5; ++q)
            sparse.addSegment(1e-3, 1.0, 0.1);
    }
    CHECK_FALSE(sparse.low());
    sparse.addSegment(1.0, 1.0, 0.1);
    CHECK(sparse.low());
    CHECK_THROWS_AS(aec::EchoToNoiseMeter(aec::EchoToNoiseSettings{.segmentSeconds = 0.0}), std::invalid_argument);
    CHECK_THROWS_AS(aec::EchoToNoiseMeter(aec::EchoToNoiseSettings{.lowBelowDb = 30.0, .highAboveDb = 20.0}),
                    std::invalid_argument);
}
