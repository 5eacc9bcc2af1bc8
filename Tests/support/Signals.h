// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Test signals shared by the CPU and GPU tests: seeded white and coloured noise, random systems, and
// error measures.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace quell::test {

inline std::vector<double> whiteNoise(std::size_t n, std::uint32_t seed, double scale = 1.0)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> g(0.0, scale);
    std::vector<double> x(n);
    for (auto& v : x) v = g(rng);
    return x;
}

// Speech-like coloured noise: white noise through a resonant AR(2) filter (poles at 0.95, +-500 Hz at
// 16 kHz) with a slow amplitude envelope, so the regressor is ill-conditioned like real speech.
inline std::vector<double> colouredNoise(std::size_t n, std::uint32_t seed, double scale = 0.1)
{
    std::vector<double> w = whiteNoise(n, seed);
    std::vector<double> x(n);
    const double r = 0.95, theta = 2.0 * 3.141592653589793 * 500.0 / 16000.0;
    const double a1 = 2.0 * r * std::cos(theta), a2 = -r * r;
    double y1 = 0.0, y2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double env = 0.6 + 0.4 * std::sin(2.0 * 3.141592653589793 * static_cast<double>(i) / 4000.0);
        const double y = 0.2 * w[i] + a1 * y1 + a2 * y2;
        y2 = y1;
        y1 = y;
        x[i] = scale * env * y;
    }
    return x;
}

// A decaying random impulse response (a crude room): h[k] ~ N(0,1) exp(-k / decay), unit energy.
inline std::vector<double> randomSystem(std::size_t taps, std::uint32_t seed, double decay)
{
    std::vector<double> h = whiteNoise(taps, seed);
    double e = 0.0;
    for (std::size_t k = 0; k < taps; ++k) {
        h[k] *= std::exp(-static_cast<double>(k) / decay);
        e += h[k] * h[k];
    }
    for (auto& v : h) v /= std::sqrt(e);
    return h;
}

inline std::vector<double> convolve(std::span<const double> x, std::span<const double> h)
{
    std::vector<double> y(x.size(), 0.0);
    for (std::size_t n = 0; n < x.size(); ++n) {
        double acc = 0.0;
        const std::size_t kmax = std::min(h.size(), n + 1);
        for (std::size_t k = 0; k < kmax; ++k)
            acc += h[k] * x[n - k];
        y[n] = acc;
    }
    return y;
}

template <typename A, typename B>
double relativeL2(std::span<const A> got, std::span<const B> ref)
{
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double d = static_cast<double>(got[i]) - static_cast<double>(ref[i]);
        num += d * d;
        den += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
    }
    return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Peak error over peak reference, max |got - ref| / max |ref|, for real or complex values (a transform's
// accuracy: every bin counts, not the energy's sum).
template <typename A, typename B>
double maxRelativeError(std::span<const A> got, std::span<const B> ref)
{
    const auto widened = [](const auto& v) {
        if constexpr (requires { v.imag(); })
            return std::complex<double>(static_cast<double>(v.real()), static_cast<double>(v.imag()));
        else
            return static_cast<double>(v);
    };
    double err = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        err = std::max(err, std::abs(widened(got[i]) - widened(ref[i])));
        norm = std::max(norm, std::abs(widened(ref[i])));
    }
    return err / norm;
}

// Normalised misalignment ||w - h||^2 / ||h||^2 in dB.
template <typename A>
double misalignmentDb(std::span<const A> w, std::span<const double> h)
{
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < h.size(); ++i) {
        const double d = static_cast<double>(w[i]) - h[i];
        num += d * d;
        den += h[i] * h[i];
    }
    return 10.0 * std::log10(num / den);
}

// Echo reduction in dB: microphone energy over output energy on the same samples.
inline double reductionDb(std::span<const float> mic, std::span<const float> out)
{
    double pm = 0.0, po = 0.0;
    for (std::size_t i = 0; i < mic.size(); ++i) {
        pm += double(mic[i]) * mic[i];
        po += double(out[i]) * out[i];
    }
    return 10.0 * std::log10(pm / po);
}

template <typename T>
std::vector<T> cast(std::span<const double> x)
{
    return std::vector<T>(x.begin(), x.end());
}

} // namespace quell::test
