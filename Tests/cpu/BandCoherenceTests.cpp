// SPDX-License-Identifier: GPL-3.0-or-later
// BandCoherence: a filtered copy of the reference (with a little noise) is coherent near 1, a signal with
// the reference's own magnitudes but its own phases near 0 (the case band powers cannot tell apart), a
// scale changes nothing, a silent band is 0; it forgets within a few time constants; bad arguments are
// refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "aec/BandCoherence.h"

using namespace quell;

namespace {

constexpr std::size_t kBins = 65;
constexpr double kFramesPerSecond = 250.0;
using Spectrum = std::vector<std::complex<float>>;

// Bins 0-8 in band 0, then bands of 8 bins: 8 bands in all, the last one 8 bins too.
std::vector<std::size_t> bandsOfEight()
{
    std::vector<std::size_t> band(kBins);
    for (std::size_t k = 0; k < kBins; ++k)
        band[k] = k == 0 ? 0 : (k - 1) / 8;
    return band;
}

// A frame of a reference whose level wanders (as speech's does) with random phases.
Spectrum referenceFrame(std::mt19937& rng, double levelDb)
{
    std::normal_distribution<float> g(0.0f, 1.0f);
    const float scale = static_cast<float>(std::pow(10.0, levelDb / 20.0));
    Spectrum x(kBins);
    for (auto& v : x)
        v = scale * std::complex<float>(g(rng), g(rng));
    return x;
}

// Each bin through a fixed complex gain (a path), with noise `snrDb` below it.
Spectrum filtered(const Spectrum& x, std::mt19937& rng, double snrDb)
{
    std::normal_distribution<float> g(0.0f, 1.0f);
    Spectrum y(kBins);
    for (std::size_t k = 0; k < kBins; ++k) {
        const double phase = 0.37 * static_cast<double>(k * k);
        const std::complex<float> path = std::polar(0.5f, static_cast<float>(phase));
        const float noise = std::abs(x[k]) * 0.5f * static_cast<float>(std::pow(10.0, -snrDb / 20.0));
        y[k] = path * x[k] + noise * std::complex<float>(g(rng), g(rng)) / std::sqrt(2.0f);
    }
    return y;
}

// The reference's magnitudes with phases of its own: a near end whose level moves with the far end's.
Spectrum sameMagnitudesOwnPhases(const Spectrum& x, std::mt19937& rng)
{
    std::uniform_real_distribution<float> phase(0.0f, 2.0f * std::numbers::pi_v<float>);
    Spectrum y(kBins);
    for (std::size_t k = 0; k < kBins; ++k)
        y[k] = std::polar(std::abs(x[k]), phase(rng));
    return y;
}

} // namespace

TEST_CASE("BandCoherence tells a filtered copy of the reference from a signal whose level alone follows it", "[aec][coherence]")
{
    const auto bandOf = bandsOfEight();
    aec::BandCoherence copy, loudCopy, ownPhases, silent;
    for (auto* c : {&copy, &loudCopy, &ownPhases, &silent})
        c->prepare(bandOf, kFramesPerSecond, 0.15);
    REQUIRE(copy.bands() == 8);
    std::mt19937 rng(1);
    std::normal_distribution<double> wander(0.0, 8.0);
    const Spectrum zero(kBins);
    for (int i = 0; i < 200; ++i) {   // 0.8 s: several time constants
        const Spectrum x = referenceFrame(rng, wander(rng));
        const Spectrum y = filtered(x, rng, 20.0);
        Spectrum loud = y;
        for (auto& v : loud)
            v *= 1000.0f;
        copy.update(y, x);
        loudCopy.update(loud, x);
        ownPhases.update(sameMagnitudesOwnPhases(x, rng), x);
        silent.update(zero, x);
    }
    INFO("mean coherences: copy " << copy.meanCoherence() << ", own phases " << ownPhases.meanCoherence());
    CHECK(copy.meanCoherence() > 0.95);
    CHECK(std::abs(loudCopy.meanCoherence() - copy.meanCoherence()) < 1e-6);
    CHECK(ownPhases.meanCoherence() < 0.25);
    CHECK(silent.meanCoherence() == 0.0);
    for (std::size_t b = 0; b < copy.bands(); ++b) {
        CHECK(copy.coherence(b) > 0.9);
        CHECK(ownPhases.coherence(b) < 0.3);
        CHECK(silent.coherence(b) == 0.0);
    }
}

TEST_CASE("BandCoherence forgets: an output that turns from echo to a near end loses its coherence within a few time constants",
          "[aec][coherence]")
{
    const auto bandOf = bandsOfEight();
    aec::BandCoherence c;
    c.prepare(bandOf, kFramesPerSecond, 0.15);
    std::mt19937 rng(2);
    for (int i = 0; i < 150; ++i) {
        const Spectrum x = referenceFrame(rng, 0.0);
        c.update(filtered(x, rng, 20.0), x);
    }
    CHECK(c.meanCoherence() > 0.95);
    // A near end 20 dB over the echo from here on: 0.3 s (two time constants) later the coherence is low.
    for (int i = 0; i < 75; ++i) {
        const Spectrum x = referenceFrame(rng, 0.0);
        Spectrum y = filtered(x, rng, 20.0);
        const Spectrum near = referenceFrame(rng, 20.0);
        for (std::size_t k = 0; k < kBins; ++k)
            y[k] += near[k];
        c.update(y, x);
    }
    INFO("mean coherence after 0.3 s of near end: " << c.meanCoherence());
    CHECK(c.meanCoherence() < 0.25);
    c.reset();
    CHECK(c.meanCoherence() == 0.0);
}

TEST_CASE("BandCoherence is the pooled coherence of a naive float64 reference, bands of uneven widths", "[aec][coherence]")
{
    // 37 bins in 5 bands of 1, 3, 7, 11 and 15 bins; 61 frames of partly related random spectra, levels
    // wandering; the averages and the pooled ratio computed plainly, frame by frame.
    const std::vector<std::size_t> widths = {1, 3, 7, 11, 15};
    std::vector<std::size_t> bandOf;
    for (std::size_t b = 0; b < widths.size(); ++b)
        bandOf.insert(bandOf.end(), widths[b], b);
    const std::size_t K = bandOf.size(), bands = widths.size();
    const double framesPerSecond = 187.5, seconds = 0.07;
    const double w = 1.0 / (seconds * framesPerSecond);
    aec::BandCoherence c;
    c.prepare(bandOf, framesPerSecond, seconds);
    std::vector<std::complex<double>> cross(K);
    std::vector<double> pa(K, 0.0), pb(K, 0.0);
    std::mt19937 rng(7);
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (int frame = 0; frame < 61; ++frame) {
        Spectrum a(K), b(K);
        const float level = std::pow(10.0f, 0.4f * g(rng));
        for (std::size_t k = 0; k < K; ++k) {
            b[k] = level * std::complex<float>(g(rng), g(rng));
            a[k] = std::complex<float>(0.3f, -0.2f * static_cast<float>(k % 3)) * b[k] + level * std::complex<float>(g(rng), g(rng));
        }
        c.update(a, b);
        double mean = 0.0;
        std::vector<double> crossSum(bands, 0.0), productSum(bands, 0.0);
        for (std::size_t k = 0; k < K; ++k) {
            const std::complex<double> x(a[k]), y(b[k]);
            cross[k] = (1.0 - w) * cross[k] + w * x * std::conj(y);
            pa[k] = (1.0 - w) * pa[k] + w * std::norm(x);
            pb[k] = (1.0 - w) * pb[k] + w * std::norm(y);
            crossSum[bandOf[k]] += std::norm(cross[k]);
            productSum[bandOf[k]] += pa[k] * pb[k];
        }
        for (std::size_t band = 0; band < bands; ++band) {
            const double expected = crossSum[band] / productSum[band];
            INFO("frame " << frame << ", band " << band);
            CHECK(c.coherence(band) == Approx(expected).epsilon(1e-9));
            // One frame alone: every bin's cross-spectrum is the product of its magnitudes, coherence 1.
            if (frame == 0)
                CHECK(c.coherence(band) == Approx(1.0).epsilon(1e-12));
            mean += expected / static_cast<double>(bands);
        }
        CHECK(c.meanCoherence() == Approx(mean).epsilon(1e-9));
    }
    CHECK(c.bands() == bands);
}

TEST_CASE("BandCoherence refuses bad arguments", "[aec][coherence]")
{
    aec::BandCoherence c;
    const auto bandOf = bandsOfEight();
    CHECK_THROWS_AS(c.prepare({}, kFramesPerSecond, 0.15), std::invalid_argument);
    CHECK_THROWS_AS(c.prepare(bandOf, 0.0, 0.15), std::invalid_argument);
    CHECK_THROWS_AS(c.prepare(bandOf, kFramesPerSecond, 0.0), std::invalid_argument);
    CHECK_THROWS_AS(c.prepare(bandOf, kFramesPerSecond, std::nan("")), std::invalid_argument);
    const std::vector<std::size_t> gap = {0, 0, 2, 2};   // band 1 has no bin
    CHECK_THROWS_AS(c.prepare(gap, kFramesPerSecond, 0.15), std::invalid_argument);
    c.prepare(bandOf, kFramesPerSecond, 0.15);
    const Spectrum shortSpectrum(kBins - 1), full(kBins);
    CHECK_THROWS_AS(c.update(shortSpectrum, full), std::invalid_argument);
    CHECK_THROWS_AS(c.update(full, shortSpectrum), std::invalid_argument);
}
