// SPDX-License-Identifier: GPL-3.0-or-later
// Clock drift compensation: the fractional delay reader against exact delays, the drift tracker on
// synthetic peak tracks, and the echo canceller on an echo whose clock runs 100 ppm off the far end's.
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

#include "aec/ClockDriftTracker.h"
#include "aec/EchoCanceller.h"
#include "aec/FractionalDelayReader.h"
#include "support/Signals.h"

using namespace quell;

namespace {

// x evaluated at n (1 + eps): the far end as heard through a device whose clock runs eps fast
// (Hann-windowed sinc over 65 samples, float64).
std::vector<double> onDriftingClock(const std::vector<double>& x, double eps)
{
    std::vector<double> y(x.size());
    for (std::size_t n = 0; n < x.size(); ++n) {
        const double t = static_cast<double>(n) * (1.0 + eps);
        const long centre = static_cast<long>(std::floor(t));
        double acc = 0.0;
        for (long k = centre - 32; k <= centre + 32; ++k) {
            if (k < 0 || k >= static_cast<long>(x.size()))
                continue;
            const double u = t - static_cast<double>(k);
            const double sinc = u == 0.0 ? 1.0 : std::sin(std::numbers::pi * u) / (std::numbers::pi * u);
            acc += x[static_cast<std::size_t>(k)] * sinc * (0.5 + 0.5 * std::cos(std::numbers::pi * u / 33.0));
        }
        y[n] = acc;
    }
    return y;
}

} // namespace

TEST_CASE("FractionalDelayReader: exact at whole delays, a sine delayed by fractions to -60 dB", "[aec][drift]")
{
    aec::FractionalDelayReader reader;
    const std::size_t length = 256;
    std::vector<float> ring(length);
    const double w = 2.0 * std::numbers::pi * 1000.0 / 16000.0;   // 1 kHz at 16 kHz
    const std::size_t newest = 100;
    // ring index k holds sample time t(k) = k - newest (mod length), newest at t = 0.
    for (std::size_t k = 0; k < length; ++k) {
        const long t = static_cast<long>((k + length - newest) % length) - (k > newest ? static_cast<long>(length) : 0);
        ring[k] = static_cast<float>(std::sin(w * static_cast<double>(t)));
    }
    for (int d = 8; d <= 200; d += 37)
        CHECK(reader.read(ring.data(), length, newest, d) == ring[(newest + length - static_cast<std::size_t>(d)) % length]);
    double worst = 0.0;
    for (double d = 8.0; d < 40.0; d += 0.173) {
        const double want = std::sin(-w * d);
        worst = std::max(worst, std::fabs(reader.read(ring.data(), length, newest, d) - want));
    }
    INFO("worst error " << worst);
    CHECK(20.0 * std::log10(worst) < -60.0);
}

TEST_CASE("ClockDriftTracker follows a moving peak and stays at zero on a still one", "[aec][drift]")
{
    const int rate = 16000, taps = 64;
    aec::ClockDriftTracker tracker;
    tracker.prepare({}, {.sampleRate = rate});
    const double interval = tracker.measureInterval();
    // A peak moving at 1.6 taps per second (100 ppm), the filter following it exactly.
    double position = 20.0;
    std::vector<float> w(taps);
    for (int m = 0; m < 400; ++m) {
        for (int k = 0; k < taps; ++k) {
            const double u = k - position;
            w[static_cast<std::size_t>(k)] = static_cast<float>(u == 0.0 ? 1.0 : std::sin(std::numbers::pi * u) / (std::numbers::pi * u));
        }
        tracker.measure(w, true);
        // The compensation removes what the tracker has found: the peak moves by what is left.
        position += (1e-4 - tracker.rate()) * interval;
    }
    INFO("rate " << tracker.ppm() << " ppm after " << tracker.updates() << " updates");
    CHECK(tracker.ppm() == Approx(100.0).margin(3.0));

    aec::ClockDriftTracker still;
    still.prepare({}, {.sampleRate = rate});
    for (int m = 0; m < 400; ++m)
        still.measure(w, true);
    CHECK(std::fabs(still.ppm()) < 1.0);
    // Measurements from a filter that does not cancel are not used.
    aec::ClockDriftTracker idle;
    idle.prepare({}, {.sampleRate = rate});
    for (int m = 0; m < 400; ++m)
        idle.measure(w, false);
    CHECK(idle.updates() == 0);
}

TEST_CASE("With the echo on a clock 100 ppm off the far end's, drift compensation keeps the echo cancelled",
          "[aec][drift]")
{
    const std::size_t n = 16000 * 30, bulk = 800;
    const auto x = test::colouredNoise(n, 5);
    const auto heard = onDriftingClock(x, 100e-6);
    const auto h = test::randomSystem(200, 6, 0.98);
    const auto y = test::convolve(std::span<const double>(heard), std::span<const double>(h));
    const auto noise = test::whiteNoise(n, 7, 1e-5);
    std::vector<float> mic(n), ref(x.begin(), x.end());
    for (std::size_t i = 0; i < n; ++i)
        mic[i] = static_cast<float>((i >= bulk ? y[i - bulk] : 0.0) + noise[i]);
    double erle[2] = {}, ppm = 0.0;
    for (const bool compensate : {false, true}) {
        aec::EchoCancellerSettings s;
        s.taps = 256;
        s.backend = aec::Backend::Cpu;
        s.cpuThreads = 1;
        s.suppressor.enabled = false;
        s.drift.enabled = compensate;
        aec::EchoCanceller aec;
        aec.prepare(s, {.maximumBlockSize = 160});
        std::vector<float> out(n);
        aec.process(mic, ref, out);
        erle[compensate] = test::reductionDb(std::span(mic).last(5 * 16000), std::span(out).last(5 * 16000));
        if (compensate)
            ppm = aec.driftPpm();
    }
    INFO("ERLE over the last 5 s: " << erle[0] << " dB without compensation, " << erle[1] << " dB with; drift found "
                                     << ppm << " ppm");
    CHECK(erle[0] < 20.0);
    CHECK(erle[1] > 40.0);
    // The far end is read 100 ppm slower: its delay shrinks by 1e-4 samples per sample.
    CHECK(ppm == Approx(-100.0).margin(5.0));
}
