// SPDX-License-Identifier: GPL-3.0-or-later
// dsp::FftPlan against a naive float64 DFT, forward and inverse, float and double, sizes 1 to 1024.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>

#include "dsp/Fft.h"
#include "support/Signals.h"

using namespace quell;

namespace {

std::vector<std::complex<double>> naiveDft(const std::vector<std::complex<double>>& x, bool inverse)
{
    const std::size_t n = x.size();
    std::vector<std::complex<double>> y(n);
    const double sign = inverse ? 1.0 : -1.0;
    for (std::size_t k = 0; k < n; ++k) {
        std::complex<double> acc = 0.0;
        for (std::size_t t = 0; t < n; ++t)
            acc += x[t] * std::polar(1.0, sign * 2.0 * std::numbers::pi * static_cast<double>((k * t) % n) / static_cast<double>(n));
        y[k] = inverse ? acc / static_cast<double>(n) : acc;
    }
    return y;
}

template <typename T>
double maxRelativeError(std::size_t n, bool inverse, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> g;
    std::vector<std::complex<double>> x(n);
    for (auto& v : x)
        v = {g(rng), g(rng)};
    std::vector<std::complex<T>> a(n);
    for (std::size_t i = 0; i < n; ++i)
        a[i] = {static_cast<T>(x[i].real()), static_cast<T>(x[i].imag())};
    dsp::FftPlan<T>(n).transform(a, inverse);
    const auto ref = naiveDft(x, inverse);
    return test::maxRelativeError(std::span<const std::complex<T>>(a), std::span<const std::complex<double>>(ref));
}

} // namespace

TEST_CASE("FftPlan matches a float64 DFT, forward and inverse", "[dsp][fft]")
{
    for (std::size_t n = 1; n <= 1024; n *= 2) {
        INFO("size " << n);
        CHECK(maxRelativeError<double>(n, false, 1) < 1e-13);
        CHECK(maxRelativeError<double>(n, true, 2) < 1e-13);
        CHECK(maxRelativeError<float>(n, false, 3) < 2e-6);
        CHECK(maxRelativeError<float>(n, true, 4) < 2e-6);
    }
}

TEST_CASE("FftPlan round trip, and sizes that are not powers of two are refused", "[dsp][fft]")
{
    dsp::FftPlan<float> plan(128);
    std::vector<std::complex<float>> a(128), orig(128);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& v : orig)
        v = {u(rng), u(rng)};
    a = orig;
    plan.transform(a, false);
    plan.transform(a, true);
    for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(std::abs(a[i] - orig[i]) < 1e-6f);
    CHECK_THROWS_AS(dsp::FftPlan<float>(0), std::invalid_argument);
    CHECK_THROWS_AS(dsp::FftPlan<float>(96), std::invalid_argument);
    std::vector<std::complex<float>> wrong(64);
    CHECK_THROWS_AS(plan.transform(wrong, false), std::invalid_argument);
}
