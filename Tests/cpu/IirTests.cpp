// SPDX-License-Identifier: GPL-3.0-or-later
#include <catch2/catch.hpp>

#include <complex>
#include <random>

#include "dsp/BiquadCascade.h"
#include "dsp/DirectFormIir.h"
#include "support/Signals.h"

using namespace quell;

namespace {

// Random stable order-M recurrence (plus-sign feedback): poles inside radius 0.95.
void randomStableFilter(std::size_t order, std::uint32_t seed, std::vector<double>& b, std::vector<double>& a)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> radius(0.3, 0.95), angle(0.0, 3.141592653589793);
    std::vector<std::complex<double>> poly{1.0};
    auto multiply = [&](std::complex<double> root) {
        std::vector<std::complex<double>> next(poly.size() + 1, 0.0);
        for (std::size_t i = 0; i < poly.size(); ++i) {
            next[i] += poly[i];
            next[i + 1] -= root * poly[i];
        }
        poly = next;
    };
    std::size_t placed = 0;
    while (placed + 2 <= order) {
        const auto p = std::polar(radius(rng), angle(rng));
        multiply(p);
        multiply(std::conj(p));
        placed += 2;
    }
    if (placed < order) multiply(radius(rng));
    // poly = 1 + c1 z^-1 + ... ; recurrence y = bx + sum a_j y[n-j] with a_j = -c_j.
    a.assign(order + 1, 0.0);
    for (std::size_t j = 1; j <= order; ++j) a[j] = -poly[j].real();
    b = test::whiteNoise(order + 1, seed + 9, 0.5);
}

std::vector<double> naiveRecurrence(const std::vector<double>& x, const std::vector<double>& b, const std::vector<double>& a)
{
    std::vector<double> y(x.size(), 0.0);
    for (std::size_t n = 0; n < x.size(); ++n) {
        double acc = 0.0;
        for (std::size_t k = 0; k < b.size() && k <= n; ++k) acc += b[k] * x[n - k];
        for (std::size_t j = 1; j < a.size() && j <= n; ++j) acc += a[j] * y[n - j];
        y[n] = acc;
    }
    return y;
}

template <typename T, typename F>
std::vector<T> inRandomBlocks(const std::vector<T>& x, std::uint32_t seed, F&& process)
{
    std::mt19937 rng(seed);
    std::vector<T> y(x.size());
    std::size_t pos = 0;
    while (pos < x.size()) {
        const std::size_t len = std::min<std::size_t>(x.size() - pos, std::uniform_int_distribution<std::size_t>(1, 211)(rng));
        process(std::span<const T>(x.data() + pos, len), std::span<T>(y.data() + pos, len));
        pos += len;
    }
    return y;
}

} // namespace

TEMPLATE_TEST_CASE("Direct-form IIR matches a naive float64 recurrence", "[dsp][iir]", float, double)
{
    for (const std::size_t order : {1u, 2u, 4u, 8u}) {
        for (const std::size_t n : {1u, 17u, 4099u, 200003u}) {
            std::vector<double> b, a;
            randomStableFilter(order, static_cast<std::uint32_t>(order * 31 + n), b, a);
            // Coefficients rounded to T first, so the reference solves the same recurrence.
            const auto bt = test::cast<TestType>(b), at = test::cast<TestType>(a);
            const std::vector<double> b64(bt.begin(), bt.end()), a64(at.begin(), at.end());
            const auto x = test::whiteNoise(n, static_cast<std::uint32_t>(n + order));
            const auto ref = naiveRecurrence(x, b64, a64);
            dsp::DirectFormIir<TestType> iir;
            iir.prepare(bt, at);
            const auto xt = test::cast<TestType>(x);
            std::vector<TestType> y(n);
            iir.process(xt, y);
            const double tol = std::is_same_v<TestType, float> ? 1e-4 : 1e-12;
            INFO("order " << order << " n " << n);
            CHECK(test::relativeL2<TestType, double>(y, ref) < tol);

            dsp::DirectFormIir<TestType> split;
            split.prepare(bt, at);
            const auto ys = inRandomBlocks(xt, static_cast<std::uint32_t>(n), [&](auto in, auto out) { split.process(in, out); });
            CHECK(ys == y);
        }
    }
}

TEST_CASE("Direct-form IIR initial conditions continue a signal exactly", "[dsp][iir]")
{
    std::vector<double> b, a;
    randomStableFilter(4, 77, b, a);
    const auto x = test::whiteNoise(1000, 5);
    const auto ref = naiveRecurrence(x, b, a);
    dsp::DirectFormIir<double> iir;
    iir.prepare(b, a);
    // State after 600 samples, given as initial conditions to a fresh filter.
    std::vector<double> xs(4), ys(4);
    for (std::size_t j = 0; j < 4; ++j) {
        xs[j] = x[599 - j];
        ys[j] = ref[599 - j];
    }
    iir.setState(xs, ys);
    std::vector<double> tail(400);
    iir.process(std::span<const double>(x.data() + 600, 400), tail);
    CHECK(test::relativeL2<double, double>(tail, std::span<const double>(ref.data() + 600, 400)) < 1e-12);
    CHECK_THROWS_AS(iir.setState(std::vector<double>(3), std::vector<double>(4)), std::invalid_argument);
}

TEMPLATE_TEST_CASE("Biquad cascade matches the equivalent naive recurrence", "[dsp][iir][sos]", float, double)
{
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> r(0.2, 0.9), th(0.1, 3.0);
    for (const std::size_t sections : {1u, 2u, 4u}) {
        std::vector<dsp::Biquad> sos;
        for (std::size_t s = 0; s < sections; ++s) {
            const double rad = r(rng), ang = th(rng);
            sos.push_back({0.5 + 0.1 * static_cast<double>(s), -0.3, 0.2, -2.0 * rad * std::cos(ang), rad * rad});
        }
        const auto x = test::whiteNoise(30011, static_cast<std::uint32_t>(sections));
        // Reference: each section as its own float64 recurrence, run in sequence (a rounded to T).
        std::vector<double> ref = x;
        for (const auto& s : sos) {
            auto rt = [](double v) { return static_cast<double>(static_cast<TestType>(v)); };
            ref = naiveRecurrence(ref, {rt(s.b0), rt(s.b1), rt(s.b2)}, {1.0, -rt(s.a1), -rt(s.a2)});
        }
        dsp::BiquadCascade<TestType> cascade;
        cascade.prepare(sos);
        const auto xt = test::cast<TestType>(x);
        const auto y = inRandomBlocks(xt, 5, [&](auto in, auto out) { cascade.process(in, out); });
        const double tol = std::is_same_v<TestType, float> ? 1e-5 : 1e-12;
        INFO("sections " << sections);
        CHECK(test::relativeL2<TestType, double>(y, ref) < tol);
    }
}

TEST_CASE("Butterworth high-pass has -3 dB at the cutoff and blocks DC", "[dsp][iir][sos]")
{
    const double fs = 16000.0, fc = 100.0;
    const dsp::Biquad s = dsp::butterworthHighPass(fc, fs);
    auto gain = [&](double f) {
        const std::complex<double> z = std::polar(1.0, -2.0 * 3.141592653589793 * f / fs);
        return std::abs((s.b0 + s.b1 * z + s.b2 * z * z) / (1.0 + s.a1 * z + s.a2 * z * z));
    };
    CHECK(20.0 * std::log10(gain(fc)) == Approx(-3.0103).margin(0.01));
    CHECK(gain(0.0) < 1e-12);
    CHECK(gain(4000.0) == Approx(1.0).margin(1e-3));
    CHECK_THROWS_AS(dsp::butterworthHighPass(9000.0, fs), std::invalid_argument);
}
