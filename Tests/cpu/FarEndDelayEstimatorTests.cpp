// SPDX-License-Identifier: GPL-3.0-or-later
// FarEndDelayEstimator and the far-end alignment of EchoCanceller: bulk delays found, followed and kept
// through far-end silence; numbers asserted against the delays the test applies.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "aec/EchoCanceller.h"
#include "aec/FarEndDelayEstimator.h"
#include "support/CancelWhole.h"
#include "support/Signals.h"

using namespace quell;

namespace {

constexpr int kRate = 16000;

// Far end: coloured noise in on/off bursts (like speech: 0.3 to 0.6 s on, 0.1 to 0.4 s off).
std::vector<float> burstyFarEnd(std::size_t n, std::uint32_t seed)
{
    const auto c = test::colouredNoise(n, seed, 0.05);
    std::mt19937 rng(seed + 1);
    std::uniform_real_distribution<double> on(0.3, 0.6), off(0.1, 0.4);
    std::vector<float> x(n, 0.0f);
    std::size_t pos = 0;
    while (pos < n) {
        const auto a = static_cast<std::size_t>(on(rng) * kRate);
        for (std::size_t i = pos; i < std::min(n, pos + a); ++i)
            x[i] = static_cast<float>(c[i]);
        pos += a + static_cast<std::size_t>(off(rng) * kRate);
    }
    return x;
}

// Mic: the far end delayed by delay[i] (piecewise), through a short decaying room, plus noise 40 dB down.
std::vector<float> echoOf(const std::vector<float>& x, const std::vector<int>& delay, std::uint32_t seed)
{
    const auto room = test::randomSystem(160, seed, 0.97);
    std::vector<double> xd(x.begin(), x.end());
    const auto y = test::convolve(std::span<const double>(xd), std::span<const double>(room));
    const auto noise = test::whiteNoise(x.size(), seed + 7, 1e-4);
    std::vector<float> m(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const long j = static_cast<long>(i) - delay[i];
        m[i] = static_cast<float>((j >= 0 ? y[static_cast<std::size_t>(j)] : 0.0) + noise[i]);
    }
    return m;
}

void feed(aec::FarEndDelayEstimator& e, const std::vector<float>& m, const std::vector<float>& x, std::size_t from,
          std::size_t to, std::size_t block = 160)
{
    for (std::size_t p = from; p < to; p += block) {
        const std::size_t n = std::min(block, to - p);
        e.process(std::span(m).subspan(p, n), std::span(x).subspan(p, n));
    }
}

} // namespace

TEST_CASE("FarEndDelayEstimator finds a bulk delay and keeps it through far-end silence", "[aec][delay]")
{
    const std::size_t n = 6 * kRate;
    auto x = burstyFarEnd(n, 11);
    for (std::size_t i = 3 * kRate; i < 5 * kRate; ++i)   // 2 s of far-end silence
        x[i] = 0.0f;
    const int trueDelay = 4321;                             // 270 ms, not a multiple of the decimation
    const auto m = echoOf(x, std::vector<int>(n, trueDelay), 12);

    aec::FarEndDelayEstimator e;
    aec::DelayEstimatorSettings s;
    e.prepare(s, {.sampleRate = 16000});
    REQUIRE_FALSE(e.found());
    feed(e, m, x, 0, 2 * kRate);
    REQUIRE(e.found());
    // The strongest path of the random room is within its first few taps; 4 kHz resolution.
    CHECK(e.delaySamples() >= trueDelay - 4);
    CHECK(e.delaySamples() <= trueDelay + 12);
    CHECK(e.confidence() > 0.3);
    const int before = e.delaySamples();
    feed(e, m, x, 2 * kRate, 5 * kRate);   // includes the 2 s of silence
    CHECK(e.delaySamples() == before);
}

TEST_CASE("FarEndDelayEstimator follows a delay change within a second and reaches 0.9 s", "[aec][delay]")
{
    const std::size_t n = 6 * kRate;
    const auto x = burstyFarEnd(n, 21);
    std::vector<int> delay(n, 14400);   // 0.9 s
    for (std::size_t i = 3 * kRate; i < n; ++i)
        delay[i] = 1234;
    const auto m = echoOf(x, delay, 22);

    aec::FarEndDelayEstimator e;
    e.prepare({}, {.sampleRate = 16000});
    feed(e, m, x, 0, 3 * kRate);
    REQUIRE(e.found());
    CHECK(std::abs(e.delaySamples() - 14400) <= 12);
    feed(e, m, x, 3 * kRate, 4 * kRate);
    CHECK(std::abs(e.delaySamples() - 1234) <= 12);
}

TEST_CASE("FarEndDelayEstimator reports nothing on a silent or uncorrelated far end", "[aec][delay]")
{
    const std::size_t n = 3 * kRate;
    const auto x = burstyFarEnd(n, 31);
    const auto other = burstyFarEnd(n, 32);   // mic hears something else entirely
    aec::FarEndDelayEstimator e;
    e.prepare({}, {.sampleRate = 16000});
    feed(e, other, x, 0, n);
    CHECK_FALSE(e.found());
    const std::vector<float> silent(n, 0.0f);
    e.reset();
    feed(e, x, silent, 0, n);
    CHECK_FALSE(e.found());
}

TEST_CASE("EchoCanceller aligns the far end: a 300 ms bulk delay with a 256-tap filter", "[aec][delay]")
{
    const std::size_t n = 4 * kRate;
    const auto c = test::colouredNoise(n, 41, 0.05);
    const std::vector<float> x(c.begin(), c.end());
    const int bulk = 4800;
    const auto m = echoOf(x, std::vector<int>(n, bulk), 42);

    auto erleOfLastSecond = [&](double maxDelaySeconds, int& applied) {
        aec::EchoCancellerSettings s;
        s.taps = 256;
        s.backend = aec::Backend::Cpu;
        s.maxDelaySeconds = maxDelaySeconds;
        aec::EchoCanceller aec;
        aec.prepare(s, {.maximumBlockSize = 256});
        const auto out = test::cancelWhole(aec, m, x, 256);
        applied = aec.alignedDelaySamples();
        return test::reductionDb(std::span(m).last(kRate), std::span(out).last(kRate));
    };
    int applied = -1;
    const double aligned = erleOfLastSecond(1.0, applied);
    // Delay less the 4 ms margin (64 samples), at the estimator's 4-sample resolution.
    CHECK(applied >= bulk - 64 - 4);
    CHECK(applied <= bulk - 64 + 12);
    CHECK(aligned > 30.0);   // the noise is 40 dB down
    const double unaligned = erleOfLastSecond(0.0, applied);
    CHECK(applied == 0);
    CHECK(unaligned < 3.0);
}

TEST_CASE("EchoCanceller: a bulk delay the filter covers stays in the taps, and the suppressor's far end waits for it", "[aec][delay]")
{
    // A room whose echo lasts 0.2 s (60 dB down at 3200 taps) under a 4096-tap Kalman filter, which
    // leaves the suppressor part of the echo to take, predicted partly from the far end's power. 50 ms of
    // playback delay is within the filter, so the alignment leaves it there; the far end's power then
    // leads the echo by 50 ms unless the suppressor waits for it (it did not: 17.4 dB of echo reduction
    // with the delay against 31.9 without; 40.1 when it waits; without the delay 49.4 since the filter's
    // process noise shrinks as it learns, which helps less where the echo starts 50 ms into a prior that
    // assumes it starts at once).
    const std::size_t n = 8 * kRate;
    const auto x = burstyFarEnd(n, 51);
    auto room = test::randomSystem(3200, 53, 3200.0 / 6.9);
    room[0] += 1.0;   // the direct path, as loud as the reverberation
    const std::vector<double> xd(x.begin(), x.end());
    const auto y = test::convolve(std::span<const double>(xd), std::span<const double>(room));
    const auto noise = test::whiteNoise(n, 54, 1e-4);
    auto reduction = [&](int bulk, int& applied, int& lag) {
        std::vector<float> m(n);
        for (std::size_t i = 0; i < n; ++i)
            m[i] = static_cast<float>((i >= static_cast<std::size_t>(bulk) ? y[i - static_cast<std::size_t>(bulk)] : 0.0) + noise[i]);
        aec::EchoCanceller aec;
        aec.prepare(test::cpuKalman(4096), {.maximumBlockSize = 160});
        const auto out = test::cancelWhole(aec, m, x, 160);
        applied = aec.alignedDelaySamples();
        lag = aec.echoLagSamples();
        const std::size_t L = static_cast<std::size_t>(aec.latencySamples()), tail = 4 * kRate;
        return test::reductionDb(std::span<const float>(m).subspan(n - tail - L, tail), std::span<const float>(out).subspan(n - tail, tail));
    };
    int applied = -1, lag = -1;
    const double undelayed = reduction(0, applied, lag);
    CHECK(applied == 0);
    CHECK(lag <= 8);
    const double delayed = reduction(800, applied, lag);
    CHECK(applied == 0);
    CHECK(lag >= 800 - 64 - 4);   // the direct path less the 4 ms margin, at the estimator's resolution
    CHECK(lag <= 800 - 64 + 12);
    INFO("echo reduction: no delay " << undelayed << " dB, 50 ms " << delayed << " dB");
    CHECK(delayed > 35.0);
    CHECK(undelayed > 35.0);
}

TEST_CASE("EchoCanceller: the Kalman filter's far end is aligned for a bulk delay past a quarter of its taps", "[aec][delay][kalman]")
{
    // 100 ms of playback delay (1600 samples) under a 4096-tap Kalman filter: within the filter, but 20 dB
    // under the prior that expects the echo at its first taps. Left in the taps, a white far end's echo
    // went uncancelled for the whole file (0.0 dB); aligned, the filter learns it at once.
    const std::size_t n = 5 * kRate;
    const auto w = test::whiteNoise(n, 61, 0.05);
    const std::vector<float> x(w.begin(), w.end());
    const int bulk = 1600;
    const auto m = echoOf(x, std::vector<int>(n, bulk), 62);
    aec::EchoCanceller aec;
    aec.prepare(test::cpuKalman(4096), {.maximumBlockSize = 160});
    const auto out = test::cancelWhole(aec, m, x, 160);
    const int applied = aec.alignedDelaySamples();
    const std::size_t L = static_cast<std::size_t>(aec.latencySamples()), tail = 2 * kRate;
    const double reduction =
        test::reductionDb(std::span<const float>(m).subspan(n - tail - L, tail), std::span<const float>(out).subspan(n - tail, tail));
    INFO("applied delay " << applied << " samples, echo reduction over the last 2 s " << reduction << " dB");
    CHECK(applied >= bulk - 64 - 4);
    CHECK(applied <= bulk - 64 + 12);
    CHECK(reduction > 30.0);   // the noise is 40 dB down
}
