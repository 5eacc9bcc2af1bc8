// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/FastRlsKernels.h"

#include "dsp/TargetClones.h"

namespace quell::dsp::detail {
namespace {

// Four doubles, loaded and stored at any double's alignment (the far-end rings are read from every offset).
typedef double V __attribute__((vector_size(32), aligned(8), may_alias));
constexpr std::size_t L = 4;

// (Macros, not functions: a function taking or returning a 32-byte vector would change the baseline ABI.)
#define QUELL_LOAD(p) (*reinterpret_cast<const V*>(p))
#define QUELL_STORE(p, v) (*reinterpret_cast<V*>(p) = (v))
// The same order in every clone: (a + b), then its lanes left to right.
inline double sum(const V& a, const V& b)
{
    const V s = a + b;
    return ((s[0] + s[1]) + s[2]) + s[3];
}

} // namespace

QUELL_CLONES FastRlsDots fastRlsDots(const double* forward, const double* backward, double* w, const double* gain,
                                     double step, bool applyStep, const double* v, const double* u, std::size_t n)
{
    V f0{}, f1{}, b0{}, b1{}, e0{}, e1{};
    const std::size_t body = n - n % (2 * L);
    std::size_t i = 0;
    if (applyStep) {
        const V k = V{} + step;
        for (; i < body; i += 2 * L) {
            const V w0 = QUELL_LOAD(w + i) + QUELL_LOAD(gain + i) * k;
            const V w1 = QUELL_LOAD(w + i + L) + QUELL_LOAD(gain + i + L) * k;
            QUELL_STORE(w + i, w0);
            QUELL_STORE(w + i + L, w1);
            f0 += QUELL_LOAD(forward + i) * QUELL_LOAD(v + i + 1);
            f1 += QUELL_LOAD(forward + i + L) * QUELL_LOAD(v + i + L + 1);
            b0 += QUELL_LOAD(backward + i) * QUELL_LOAD(v + i);
            b1 += QUELL_LOAD(backward + i + L) * QUELL_LOAD(v + i + L);
            e0 += w0 * QUELL_LOAD(u + i);
            e1 += w1 * QUELL_LOAD(u + i + L);
        }
    } else {
        for (; i < body; i += 2 * L) {
            f0 += QUELL_LOAD(forward + i) * QUELL_LOAD(v + i + 1);
            f1 += QUELL_LOAD(forward + i + L) * QUELL_LOAD(v + i + L + 1);
            b0 += QUELL_LOAD(backward + i) * QUELL_LOAD(v + i);
            b1 += QUELL_LOAD(backward + i + L) * QUELL_LOAD(v + i + L);
            e0 += QUELL_LOAD(w + i) * QUELL_LOAD(u + i);
            e1 += QUELL_LOAD(w + i + L) * QUELL_LOAD(u + i + L);
        }
    }
    FastRlsDots d{sum(f0, f1), sum(b0, b1), sum(e0, e1)};
    for (; i < n; ++i) {
        if (applyStep)
            w[i] += gain[i] * step;
        d.forward += forward[i] * v[i + 1];
        d.backward += backward[i] * v[i];
        d.echo += w[i] * u[i];
    }
    return d;
}

QUELL_CLONES double fastRlsPredictorUpdate(const double* gain, const double* forwardOld, double* forwardNew,
                                           double* backward, double* next, const double* v, double c,
                                           double extendedLast, double forwardPosterior, double backwardStep,
                                           std::size_t n)
{
    const V cv = V{} + c, el = V{} + extendedLast, fp = V{} + forwardPosterior, bs = V{} + backwardStep;
    V g0{}, g1{};
    const std::size_t body = n - n % (2 * L);
    std::size_t i = 0;
    for (; i < body; i += 2 * L) {
        const V n0 = (QUELL_LOAD(gain + i - 1) - QUELL_LOAD(forwardOld + i - 1) * cv) + el * QUELL_LOAD(backward + i);
        const V n1 = (QUELL_LOAD(gain + i + L - 1) - QUELL_LOAD(forwardOld + i + L - 1) * cv) + el * QUELL_LOAD(backward + i + L);
        QUELL_STORE(next + i, n0);
        QUELL_STORE(next + i + L, n1);
        QUELL_STORE(forwardNew + i, QUELL_LOAD(forwardOld + i) + QUELL_LOAD(gain + i) * fp);
        QUELL_STORE(forwardNew + i + L, QUELL_LOAD(forwardOld + i + L) + QUELL_LOAD(gain + i + L) * fp);
        QUELL_STORE(backward + i, QUELL_LOAD(backward + i) + n0 * bs);
        QUELL_STORE(backward + i + L, QUELL_LOAD(backward + i + L) + n1 * bs);
        g0 += n0 * QUELL_LOAD(v + i);
        g1 += n1 * QUELL_LOAD(v + i + L);
    }
    double gainDot = sum(g0, g1);
    for (; i < n; ++i) {
        next[i] = (gain[i - 1] - forwardOld[i - 1] * c) + extendedLast * backward[i];
        forwardNew[i] = forwardOld[i] + gain[i] * forwardPosterior;
        backward[i] += next[i] * backwardStep;
        gainDot += next[i] * v[i];
    }
    return gainDot;
}

QUELL_CLONES void fastRlsApplyStep(double* w, const double* gain, double step, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
        w[i] += gain[i] * step;
}

#undef QUELL_LOAD
#undef QUELL_STORE

} // namespace quell::dsp::detail
