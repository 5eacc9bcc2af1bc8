// SPDX-License-Identifier: GPL-3.0-or-later
// LoudspeakerExcessSpectrum: nothing where the far end stays below its knees, a predictor that follows
// the far end's scale exactly (the knees follow its level), and one that grows much faster than the far
// end's power in its loud passages (where a loudspeaker's distortion is).
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "aec/LoudspeakerExcessSpectrum.h"

using namespace quell;

namespace {

constexpr std::size_t kFrame = 128, kHop = 64, kBands = 4;

struct Run {
    std::vector<double> excess;   // per hop: clipper 0's present power over the bands
    std::vector<double> far;      // per hop: the far end's power in the hop
};

Run run(const std::vector<float>& x)
{
    std::vector<std::size_t> bandOf(kFrame / 2 + 1);
    for (std::size_t k = 0; k < bandOf.size(); ++k)
        bandOf[k] = k * kBands / bandOf.size();
    std::vector<float> window(kFrame);
    for (std::size_t n = 0; n < kFrame; ++n)
        window[n] = static_cast<float>(std::sqrt(0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * static_cast<double>(n) / kFrame)));
    aec::LoudspeakerExcessSpectrum e;
    e.prepare(kFrame, bandOf, kBands, 0.8f, 250.0);
    std::vector<float> frame(kFrame, 0.0f);
    Run r;
    for (std::size_t at = 0; at + kHop <= x.size(); at += kHop) {
        std::copy(frame.begin() + kHop, frame.end(), frame.begin());
        std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(at), kHop, frame.end() - kHop);
        e.update(frame, window, kHop);
        double sum = 0.0, held = 0.0, power = 0.0;
        for (std::size_t b = 0; b < kBands; ++b) {
            sum += e.present(0)[b];
            held += e.held(0)[b];
            CHECK(e.held(0)[b] >= e.present(0)[b]);
            CHECK(e.held(1)[b] <= e.held(0)[b] * 1.0001 + 1e-30);   // the higher knee cuts less off
        }
        for (std::size_t n = at; n < at + kHop; ++n)
            power += static_cast<double>(x[n]) * x[n];
        r.excess.push_back(sum);
        r.far.push_back(power / kHop);
    }
    return r;
}

// Laplacian noise (speech-like peaks) at RMS `rms`.
std::vector<float> laplacian(std::size_t n, double rms, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::exponential_distribution<double> ex(std::sqrt(2.0) / rms);
    std::bernoulli_distribution sign(0.5);
    std::vector<float> x(n);
    for (float& v : x)
        v = static_cast<float>(sign(rng) ? ex(rng) : -ex(rng));
    return x;
}

} // namespace

TEST_CASE("A far end within its knees has no loudspeaker excess", "[aec][suppressor]")
{
    // A square wave's peak is its RMS level: the lowest knee, exactly.
    std::vector<float> x(16000);
    for (std::size_t n = 0; n < x.size(); ++n)
        x[n] = (n / 20) % 2 ? 0.3f : -0.3f;
    const Run r = run(x);
    for (std::size_t h = 10; h < r.excess.size(); ++h)
        CHECK(r.excess[h] <= 1e-9 * r.far[h]);
}

TEST_CASE("The loudspeaker excess follows the far end's scale and grows faster than its loud passages", "[aec][suppressor]")
{
    const auto quiet = laplacian(32000, 0.01, 1);
    auto loud = quiet;
    for (float& v : loud)
        v *= 10.0f;
    const Run a = run(quiet), b = run(loud);
    // Scale invariance: 20 dB more far end, 20 dB more excess, once the level has settled (2 s).
    double ea = 0.0, eb = 0.0;
    for (std::size_t h = 250; h < a.excess.size(); ++h) {
        ea += a.excess[h];
        eb += b.excess[h];
    }
    CHECK(10.0 * std::log10(eb / ea) == Approx(20.0).margin(0.01));

    // Phrases: 0.25 s at one level, 0.25 s 12 dB louder. The far end's power differs by 12 dB between
    // them; the excess (knee at the mean level) by far more.
    auto x = laplacian(64000, 0.01, 2);
    for (std::size_t n = 0; n < x.size(); ++n)
        if ((n / 4000) % 2)
            x[n] *= 4.0f;
    const Run p = run(x);
    double farQuiet = 0.0, farLoud = 0.0, excessQuiet = 0.0, excessLoud = 0.0;
    for (std::size_t h = 500; h < p.excess.size(); ++h) {
        // Hops well inside a phrase (the frame spans two hops).
        const std::size_t phrase = (h * kHop) / 4000, into = (h * kHop) % 4000;
        if (into < 2 * kHop || into > 4000 - 2 * kHop)
            continue;
        (phrase % 2 ? farLoud : farQuiet) += p.far[h];
        (phrase % 2 ? excessLoud : excessQuiet) += p.excess[h];
    }
    const double farDb = 10.0 * std::log10(farLoud / farQuiet), excessDb = 10.0 * std::log10(excessLoud / excessQuiet);
    CHECK(farDb == Approx(12.0).margin(0.5));
    CHECK(excessDb > farDb + 8.0);
}

TEST_CASE("LoudspeakerExcessSpectrum refuses a wrong frame", "[aec][suppressor]")
{
    aec::LoudspeakerExcessSpectrum e;
    std::vector<std::size_t> bandOf(kFrame / 2 + 1, 0);
    CHECK_THROWS_AS(e.prepare(kFrame, std::span(bandOf).first(10), 1, 0.8f, 250.0), std::invalid_argument);
    bandOf[3] = 5;
    CHECK_THROWS_AS(e.prepare(kFrame, bandOf, 2, 0.8f, 250.0), std::invalid_argument);
    bandOf[3] = 0;
    e.prepare(kFrame, bandOf, 1, 0.8f, 250.0);
    std::vector<float> frame(kFrame), window(kFrame, 1.0f);
    CHECK_THROWS_AS(e.update(std::span(frame).first(64), window, 64), std::invalid_argument);
    CHECK_THROWS_AS(e.update(frame, window, 0), std::invalid_argument);
}
