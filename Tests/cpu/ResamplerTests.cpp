// SPDX-License-Identifier: GPL-3.0-or-later
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "dsp/PolyphaseResampler.h"
#include "support/Signals.h"

using namespace quell;

namespace {

// Zero-stuff by L, filter by the prototype, keep every M-th sample: the definition, in float64.
std::vector<double> naiveResample(const std::vector<double>& x, int up, int down)
{
    const auto h = dsp::designResamplerPrototype(up, down, {});
    const std::size_t upLen = x.size() * static_cast<std::size_t>(up);
    std::vector<double> out;
    for (std::size_t t = 0; t < upLen; t += static_cast<std::size_t>(down)) {
        double acc = 0.0;
        for (std::size_t k = 0; k < h.size() && k <= t; ++k) {
            const std::size_t s = t - k;
            if (s % static_cast<std::size_t>(up) == 0) acc += h[k] * x[s / static_cast<std::size_t>(up)];
        }
        out.push_back(acc);
    }
    return out;
}

} // namespace

TEST_CASE("Polyphase resampler matches zero-stuff, filter, decimate", "[dsp][resampler]")
{
    const std::vector<std::pair<int, int>> rates{{48000, 16000}, {16000, 48000}, {44100, 16000}, {16000, 44100}, {16000, 16000}};
    for (const auto& [in, out] : rates) {
        for (const std::size_t n : {1u, 441u, 9973u}) {
            const auto x = test::whiteNoise(n, static_cast<std::uint32_t>(n + in));
            dsp::PolyphaseResampler<double> rs;
            rs.prepare(in, out);
            const auto ref = naiveResample(x, rs.upFactor(), rs.downFactor());
            // Random block splits.
            std::mt19937 rng(static_cast<std::uint32_t>(n));
            std::vector<double> y;
            std::vector<double> buf;
            std::size_t pos = 0;
            while (pos < n) {
                const std::size_t len = std::min<std::size_t>(n - pos, std::uniform_int_distribution<std::size_t>(1, 500)(rng));
                buf.assign(rs.maxOutput(len), 0.0);
                const std::size_t got = rs.process(std::span<const double>(x.data() + pos, len), buf);
                y.insert(y.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(got));
                pos += len;
            }
            INFO(in << " -> " << out << ", n " << n);
            REQUIRE(y.size() == ref.size());
            CHECK(test::relativeL2<double, double>(y, ref) < 1e-12);
        }
    }
}

TEST_CASE("Resampler passes a pass-band tone with unit gain and the reported delay", "[dsp][resampler]")
{
    for (const auto& [in, out] : std::vector<std::pair<int, int>>{{48000, 16000}, {16000, 48000}, {44100, 16000}, {16000, 44100}}) {
        const double f = 1000.0;
        const std::size_t n = static_cast<std::size_t>(in); // 1 s
        std::vector<float> x(n);
        for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(std::sin(2.0 * 3.141592653589793 * f * static_cast<double>(i) / in));
        dsp::PolyphaseResampler<float> rs;
        rs.prepare(in, out);
        std::vector<float> y(rs.maxOutput(n));
        y.resize(rs.process(x, y));
        // Compare with the ideal tone delayed by the reported delay, away from the start-up transient.
        const double delay = rs.delayInOutputSamples();
        double err = 0.0, ref = 0.0;
        for (std::size_t m = y.size() / 4; m < y.size() * 3 / 4; ++m) {
            const double t = (static_cast<double>(m) - delay) / out;
            const double ideal = std::sin(2.0 * 3.141592653589793 * f * t);
            err += (y[m] - ideal) * (y[m] - ideal);
            ref += ideal * ideal;
        }
        INFO(in << " -> " << out << " delay " << delay);
        CHECK(10.0 * std::log10(err / ref) < -60.0);
    }
}

TEST_CASE("Resampler rejects bad rates", "[dsp][resampler]")
{
    dsp::PolyphaseResampler<float> rs;
    CHECK_THROWS_AS(rs.prepare(0, 16000), std::invalid_argument);
    CHECK_THROWS_AS(rs.prepare(48000, -1), std::invalid_argument);
}
