// SPDX-License-Identifier: GPL-3.0-or-later
#include <catch2/catch.hpp>

#include <random>

#include "dsp/Fir.h"
#include "support/Signals.h"

using namespace quell;

namespace {

std::vector<double> naiveFir(const std::vector<double>& x, const std::vector<double>& h)
{
    return test::convolve(x, h);
}

template <typename T>
std::vector<T> runSplit(dsp::Fir<T>& fir, const std::vector<T>& x, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<T> y(x.size());
    std::size_t pos = 0;
    while (pos < x.size()) {
        const std::size_t len = std::min<std::size_t>(x.size() - pos, std::uniform_int_distribution<std::size_t>(1, 97)(rng));
        fir.process(std::span<const T>(x.data() + pos, len), std::span<T>(y.data() + pos, len));
        pos += len;
    }
    return y;
}

} // namespace

TEMPLATE_TEST_CASE("Fir matches a naive float64 convolution on awkward lengths", "[dsp][fir]", float, double)
{
    const double tol = std::is_same_v<TestType, float> ? 2e-6 : 1e-13;
    for (const std::size_t taps : {1u, 2u, 7u, 61u, 257u}) {
        for (const std::size_t n : {1u, 13u, 997u, 50021u}) {
            const auto x = test::whiteNoise(n, static_cast<std::uint32_t>(taps * 7 + n));
            const auto h = test::whiteNoise(taps, static_cast<std::uint32_t>(taps + 3), 0.3);
            const auto ref = naiveFir(x, h);
            const auto xt = test::cast<TestType>(x);
            const auto ht = test::cast<TestType>(h);
            dsp::Fir<TestType> fir;
            fir.prepare(ht);
            std::vector<TestType> y(n);
            fir.process(xt, y);
            INFO("taps " << taps << " n " << n);
            CHECK(test::relativeL2<TestType, double>(y, ref) < tol);

            dsp::Fir<TestType> split;
            split.prepare(ht);
            const auto ys = runSplit(split, xt, static_cast<std::uint32_t>(n));
            CHECK(ys == y); // same arithmetic in the same order: bit-identical
        }
    }
}

TEST_CASE("Fir reset clears the history and empty taps are rejected", "[dsp][fir]")
{
    dsp::Fir<double> fir;
    CHECK_THROWS_AS(fir.prepare(std::span<const double>{}), std::invalid_argument);
    const std::vector<double> h{0.5, 0.25};
    fir.prepare(h);
    std::vector<double> x{1.0, 0.0}, y(2);
    fir.process(x, y);
    CHECK(y[0] == 0.5);
    CHECK(y[1] == 0.25);
    fir.reset();
    std::vector<double> z{0.0}, yz(1);
    fir.process(z, yz);
    CHECK(yz[0] == 0.0);
}
