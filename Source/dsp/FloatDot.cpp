// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/FloatDot.h"

#include "dsp/TargetClones.h"

namespace quell::dsp {
namespace {

// Eight floats, loaded at any float's alignment (the regressor is read from every offset).
typedef float V __attribute__((vector_size(32), aligned(4), may_alias));
constexpr std::size_t L = 8;

// (A macro, not a function: a function taking or returning a 32-byte vector would change the baseline ABI.)
#define QUELL_LOAD(p) (*reinterpret_cast<const V*>(p))
// The same order in every clone: (a + b), then its lanes as a balanced tree.
inline float sum(const V& a, const V& b)
{
    const V s = a + b;
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

} // namespace

QUELL_CLONES float floatDot(const float* w, const float* u, std::size_t n)
{
    V a{}, b{};
    const std::size_t body = n - n % (2 * L);
    std::size_t i = 0;
    for (; i < body; i += 2 * L) {
        a += QUELL_LOAD(w + i) * QUELL_LOAD(u + i);
        b += QUELL_LOAD(w + i + L) * QUELL_LOAD(u + i + L);
    }
    float s = sum(a, b);
    for (; i < n; ++i)
        s += w[i] * u[i];
    return s;
}

QUELL_CLONES FloatDotPair floatDotPair(const float* a, const float* b, const float* u, std::size_t n)
{
    V a0{}, a1{}, b0{}, b1{};
    const std::size_t body = n - n % (2 * L);
    std::size_t i = 0;
    for (; i < body; i += 2 * L) {
        const V u0 = QUELL_LOAD(u + i), u1 = QUELL_LOAD(u + i + L);
        a0 += QUELL_LOAD(a + i) * u0;
        a1 += QUELL_LOAD(a + i + L) * u1;
        b0 += QUELL_LOAD(b + i) * u0;
        b1 += QUELL_LOAD(b + i + L) * u1;
    }
    FloatDotPair d{sum(a0, a1), sum(b0, b1)};
    for (; i < n; ++i) {
        d.a += a[i] * u[i];
        d.b += b[i] * u[i];
    }
    return d;
}

#undef QUELL_LOAD

} // namespace quell::dsp
