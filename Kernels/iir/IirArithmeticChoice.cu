// SPDX-License-Identifier: GPL-3.0-or-later
// Host code only: the float32-loss probe behind IirArithmetic::Auto (see IirArithmeticChoice.h).
#include "iir/IirArithmeticChoice.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>

namespace quell::gpu::iir {
namespace {

constexpr std::size_t kProbeLength = 1 << 14;

// White noise plus a strong, slowly wandering low-frequency part (leaky random walk): the input that
// exposes a high-pass filter's cancellation.
std::vector<float> probeSignal()
{
    std::mt19937 rng(20240601u);
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<float> x(kProbeLength);
    double walk = 0.0;
    for (auto& v : x) {
        walk = 0.9995 * walk + 0.05 * g(rng);
        v = static_cast<float>(0.2 * g(rng) + walk);
    }
    return x;
}

template <typename Real>
std::vector<double> runDirect(const std::vector<double>& cd, int m, const std::vector<float>& x)
{
    std::vector<Real> c(cd.begin(), cd.end());
    std::vector<Real> s(static_cast<std::size_t>(m), Real(0));
    std::vector<double> y(x.size());
    for (std::size_t n = 0; n < x.size(); ++n) {
        auto xin = [&](int k) { return n >= static_cast<std::size_t>(k) ? static_cast<Real>(x[n - static_cast<std::size_t>(k)]) : Real(0); };
        Real w = c[0] * xin(0);
        for (int k = 1; k <= m; ++k)
            w = std::fma(c[static_cast<std::size_t>(k)], xin(k), w);
        Real acc = w;
        for (int j = m; j >= 1; --j)
            acc = std::fma(c[static_cast<std::size_t>(m + j)], s[static_cast<std::size_t>(j - 1)], acc);
        for (int j = m - 1; j > 0; --j)
            s[static_cast<std::size_t>(j)] = s[static_cast<std::size_t>(j - 1)];
        s[0] = acc;
        y[n] = static_cast<double>(acc);
    }
    return y;
}

template <typename Real>
std::vector<double> runCascade(const std::vector<double>& cd, int sections, const std::vector<float>& x)
{
    std::vector<Real> c(cd.begin(), cd.end());
    std::vector<Real> s(static_cast<std::size_t>(2 * sections), Real(0));
    std::vector<double> y(x.size());
    Real x1 = 0, x2 = 0;
    for (std::size_t n = 0; n < x.size(); ++n) {
        Real u = x[n], u1 = x1, u2 = x2;
        x2 = x1;
        x1 = x[n];
        for (int q = 0; q < sections; ++q) {
            const std::size_t o = static_cast<std::size_t>(5 * q);
            const Real v1 = s[static_cast<std::size_t>(2 * q)], v2 = s[static_cast<std::size_t>(2 * q + 1)];
            Real v = c[o + 2] * u2;
            v = std::fma(c[o + 1], u1, v);
            v = std::fma(-c[o + 4], v2, v);
            v = std::fma(-c[o + 3], v1, v);
            v = std::fma(c[o], u, v);
            s[static_cast<std::size_t>(2 * q + 1)] = v1;
            s[static_cast<std::size_t>(2 * q)] = v;
            u = v;
            u1 = v1;
            u2 = v2;
        }
        y[n] = static_cast<double>(u);
    }
    return y;
}

double relativeL2(const std::vector<double>& got, const std::vector<double>& ref)
{
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        num += (got[i] - ref[i]) * (got[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    if (!std::isfinite(num))
        return INFINITY;
    return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

} // namespace

double float32LossDirect(const std::vector<double>& c, int order)
{
    static const std::vector<float> x = probeSignal();
    return relativeL2(runDirect<float>(c, order, x), runDirect<double>(c, order, x));
}

double float32LossCascade(const std::vector<double>& c, int sections)
{
    static const std::vector<float> x = probeSignal();
    return relativeL2(runCascade<float>(c, sections, x), runCascade<double>(c, sections, x));
}

} // namespace quell::gpu::iir
