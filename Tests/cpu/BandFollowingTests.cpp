// SPDX-License-Identifier: GPL-3.0-or-later
// BandFollowing: a signal whose band powers move with the reference's correlates near 1, an independent
// one near 0, an inverse one near -1, a constant one at 0; it forgets within a few time constants; a scale
// does not change it (log powers); bad arguments are refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "aec/BandFollowing.h"

using namespace quell;

namespace {

constexpr std::size_t kBands = 12;
constexpr double kFramesPerSecond = 250.0;

// Band powers that wander like syllables: each band's level in dB a smoothed random walk (standard
// deviation about 10 dB), the bands partly shared (speech's envelope moves all bands at once).
std::vector<std::vector<double>> wanderingPowers(int frames, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<std::vector<double>> p(static_cast<std::size_t>(frames), std::vector<double>(kBands));
    double common = 0.0;
    std::vector<double> own(kBands, 0.0);
    for (auto& frame : p) {
        common = 0.95 * common + 0.31 * 8.0 * g(rng);
        for (std::size_t b = 0; b < kBands; ++b) {
            own[b] = 0.9 * own[b] + 0.44 * 5.0 * g(rng);
            frame[b] = std::pow(10.0, (common + own[b] - 40.0) / 10.0);
        }
    }
    return p;
}

} // namespace

TEST_CASE("BandFollowing tells a signal that follows the reference from one that does not", "[aec][following]")
{
    const int frames = 200;   // 0.8 s: several time constants of 0.15 s
    const auto reference = wanderingPowers(frames, 1), other = wanderingPowers(frames, 2);
    aec::BandFollowing following, independent, inverse, constant;
    for (auto* f : {&following, &independent, &inverse, &constant})
        f->prepare(kBands, kFramesPerSecond, 0.15);
    std::mt19937 rng(3);
    std::normal_distribution<double> spreadDb(0.0, 2.0);
    for (int i = 0; i < frames; ++i) {
        const auto& r = reference[static_cast<std::size_t>(i)];
        std::vector<double> scaled(kBands), inv(kBands), flat(kBands, 1e-3);
        for (std::size_t b = 0; b < kBands; ++b) {
            // -25 dB of the reference with a 2 dB spread: an echo, as a residual of it is.
            scaled[b] = 0.003 * r[b] * std::pow(10.0, spreadDb(rng) / 10.0);
            inv[b] = 1e-8 / r[b];
        }
        following.update(scaled, r);
        independent.update(other[static_cast<std::size_t>(i)], r);
        inverse.update(inv, r);
        constant.update(flat, r);
    }
    INFO("mean correlations: following " << following.meanCorrelation() << ", independent " << independent.meanCorrelation()
                                         << ", inverse " << inverse.meanCorrelation() << ", constant " << constant.meanCorrelation());
    CHECK(following.meanCorrelation() > 0.85);
    CHECK(std::abs(independent.meanCorrelation()) < 0.35);
    CHECK(inverse.meanCorrelation() < -0.99);
    CHECK(constant.meanCorrelation() == 0.0);
    for (std::size_t b = 0; b < kBands; ++b) {
        CHECK(following.correlation(b) > 0.6);
        CHECK(constant.correlation(b) == 0.0);
    }
}

TEST_CASE("BandFollowing forgets: a signal that starts following the reference is seen within a few time constants",
          "[aec][following]")
{
    const int frames = 400;
    const auto reference = wanderingPowers(frames, 4), other = wanderingPowers(frames, 5);
    aec::BandFollowing f;
    f.prepare(kBands, kFramesPerSecond, 0.15);
    const int switchAt = 250;   // 1 s independent, then the reference itself
    double before = 0.0;
    int crossed = -1;
    for (int i = 0; i < frames; ++i) {
        const auto& r = reference[static_cast<std::size_t>(i)];
        f.update(i < switchAt ? other[static_cast<std::size_t>(i)] : r, r);
        if (i == switchAt - 1)
            before = f.meanCorrelation();
        if (i >= switchAt && crossed < 0 && f.meanCorrelation() >= 0.5)
            crossed = i - switchAt;
    }
    INFO("before the switch " << before << "; 0.5 reached " << crossed << " frames after it");
    CHECK(before < 0.35);
    REQUIRE(crossed >= 0);
    // Within two time constants: 0.3 s = 75 frames at 250 per second.
    CHECK(crossed <= 75);
    CHECK(f.meanCorrelation() > 0.9);
    f.reset();
    CHECK(f.meanCorrelation() == 0.0);
}

TEST_CASE("BandFollowing refuses bad arguments", "[aec][following]")
{
    aec::BandFollowing f;
    CHECK_THROWS_AS(f.prepare(0, kFramesPerSecond, 0.15), std::invalid_argument);
    CHECK_THROWS_AS(f.prepare(kBands, 0.0, 0.15), std::invalid_argument);
    CHECK_THROWS_AS(f.prepare(kBands, kFramesPerSecond, 0.0), std::invalid_argument);
    f.prepare(kBands, kFramesPerSecond, 0.15);
    const std::vector<double> three(3, 1.0), bands(kBands, 1.0);
    CHECK_THROWS_AS(f.update(three, bands), std::invalid_argument);
    CHECK_THROWS_AS(f.update(bands, three), std::invalid_argument);
}
