// SPDX-License-Identifier: GPL-3.0-or-later
// dsp::RealFftPlan against a naive float64 DFT of a real signal, forward and inverse, float and double,
// sizes 2 to 2048.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

#include "dsp/RealFft.h"
#include "support/Signals.h"

using namespace quell;

namespace {

std::vector<std::complex<double>> naiveRealDft(const std::vector<double>& x)
{
    const std::size_t n = x.size();
    std::vector<std::complex<double>> y(n / 2 + 1);
    for (std::size_t k = 0; k < y.size(); ++k)
        for (std::size_t t = 0; t < n; ++t)
            y[k] += x[t] * std::polar(1.0, -2.0 * std::numbers::pi * static_cast<double>((k * t) % n) / static_cast<double>(n));
    return y;
}

template <typename T>
double forwardError(std::size_t n, std::uint32_t seed)
{
    const std::vector<double> x = test::whiteNoise(n, seed);
    std::vector<T> in(x.begin(), x.end());
    std::vector<std::complex<T>> out(n / 2 + 1, {T(99), T(99)});
    dsp::RealFftPlan<T>(n).forward(in, out);
    const auto ref = naiveRealDft(x);
    return test::maxRelativeError(std::span<const std::complex<T>>(out), std::span<const std::complex<double>>(ref));
}

// The inverse of a random real signal's spectrum (computed in float64) against the signal.
template <typename T>
double inverseError(std::size_t n, std::uint32_t seed)
{
    const std::vector<double> x = test::whiteNoise(n, seed);
    const auto spectrum = naiveRealDft(x);
    std::vector<std::complex<T>> in(spectrum.size());
    for (std::size_t k = 0; k < in.size(); ++k)
        in[k] = {static_cast<T>(spectrum[k].real()), static_cast<T>(spectrum[k].imag())};
    // Bins 0 and n/2 of a real signal are real: whatever sits in their imaginary parts is ignored.
    in.front() = {in.front().real(), T(5)};
    in.back() = {in.back().real(), T(-5)};
    std::vector<T> out(n, T(99));
    dsp::RealFftPlan<T>(n).inverse(in, out);
    return test::maxRelativeError(std::span<const T>(out), std::span<const double>(x));
}

} // namespace

TEST_CASE("RealFftPlan matches a float64 DFT of a real signal, forward and inverse", "[dsp][fft]")
{
    for (std::size_t n = 2; n <= 2048; n *= 2) {
        INFO("size " << n);
        CHECK(forwardError<double>(n, 1) < 1e-13);
        CHECK(inverseError<double>(n, 2) < 1e-13);
        CHECK(forwardError<float>(n, 3) < 2e-6);
        CHECK(inverseError<float>(n, 4) < 4e-6);
    }
}

TEST_CASE("RealFftPlan round trip, and wrong sizes are refused with the sizes named", "[dsp][fft]")
{
    const dsp::RealFftPlan<float> plan(256);
    CHECK(plan.size() == 256);
    CHECK(plan.bins() == 129);
    std::vector<float> x(256), back(256);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& v : x)
        v = u(rng);
    std::vector<std::complex<float>> spectrum(129);
    plan.forward(x, spectrum);
    plan.inverse(spectrum, back);
    for (std::size_t i = 0; i < x.size(); ++i)
        CHECK(std::abs(back[i] - x[i]) < 1e-6f);
    CHECK_THROWS_AS(dsp::RealFftPlan<float>(1), std::invalid_argument);
    CHECK_THROWS_AS(dsp::RealFftPlan<float>(96), std::invalid_argument);
    std::vector<std::complex<float>> tooFew(128);
    CHECK_THROWS_WITH(plan.forward(x, tooFew), Catch::Contains("256 samples into 128 bins"));
    std::vector<float> tooShort(255);
    CHECK_THROWS_WITH(plan.inverse(spectrum, tooShort), Catch::Contains("129 bins into 255 samples"));
}
