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

QUELL_CLONES StereoFastRlsDots stereoFastRlsDots(const double* forward0, const double* forward1, const double* backward0,
                                                 const double* backward1, double* w, const double* gain, double step,
                                                 bool applyStep, const double* v, const double* u, std::size_t n)
{
    V f0{}, f1{}, g0{}, g1{}, b0{}, b1{}, c0{}, c1{}, e0{}, e1{};
    const std::size_t body = n - n % (2 * L);
    const V k = V{} + step;
    std::size_t i = 0;
    for (; i < body; i += 2 * L) {
        V w0 = QUELL_LOAD(w + i), w1 = QUELL_LOAD(w + i + L);
        if (applyStep) {
            w0 += QUELL_LOAD(gain + i) * k;
            w1 += QUELL_LOAD(gain + i + L) * k;
            QUELL_STORE(w + i, w0);
            QUELL_STORE(w + i + L, w1);
        }
        const V p0 = QUELL_LOAD(v + i + 2), p1 = QUELL_LOAD(v + i + L + 2);
        const V q0 = QUELL_LOAD(v + i), q1 = QUELL_LOAD(v + i + L);
        f0 += QUELL_LOAD(forward0 + i) * p0;
        f1 += QUELL_LOAD(forward0 + i + L) * p1;
        g0 += QUELL_LOAD(forward1 + i) * p0;
        g1 += QUELL_LOAD(forward1 + i + L) * p1;
        b0 += QUELL_LOAD(backward0 + i) * q0;
        b1 += QUELL_LOAD(backward0 + i + L) * q1;
        c0 += QUELL_LOAD(backward1 + i) * q0;
        c1 += QUELL_LOAD(backward1 + i + L) * q1;
        e0 += w0 * QUELL_LOAD(u + i);
        e1 += w1 * QUELL_LOAD(u + i + L);
    }
    StereoFastRlsDots d;
    d.forward[0] = sum(f0, f1);
    d.forward[1] = sum(g0, g1);
    d.backward[0] = sum(b0, b1);
    d.backward[1] = sum(c0, c1);
    d.echo = sum(e0, e1);
    for (; i < n; ++i) {
        if (applyStep)
            w[i] += gain[i] * step;
        d.forward[0] += forward0[i] * v[i + 2];
        d.forward[1] += forward1[i] * v[i + 2];
        d.backward[0] += backward0[i] * v[i];
        d.backward[1] += backward1[i] * v[i];
        d.echo += w[i] * u[i];
    }
    return d;
}

QUELL_CLONES double stereoFastRlsPredictorUpdate(const double* gain, const double* forward0Old, const double* forward1Old,
                                                 double* forward0New, double* forward1New, double* backward0,
                                                 double* backward1, double* next, const double* v,
                                                 const StereoFastRlsStep& step, std::size_t n)
{
    const V c0 = V{} + step.c[0], c1 = V{} + step.c[1];
    const V m0 = V{} + step.extendedLast[0], m1 = V{} + step.extendedLast[1];
    const V p0 = V{} + step.forwardPosterior[0], p1 = V{} + step.forwardPosterior[1];
    const V s0 = V{} + step.backwardStep[0], s1 = V{} + step.backwardStep[1];
    V dot{};
    const std::size_t body = n - n % L;
    std::size_t i = 0;
    for (; i < body; i += L) {
        const V b0 = QUELL_LOAD(backward0 + i), b1 = QUELL_LOAD(backward1 + i);
        const V k = ((QUELL_LOAD(gain + i - 2) - QUELL_LOAD(forward0Old + i - 2) * c0) - QUELL_LOAD(forward1Old + i - 2) * c1)
                    + (m0 * b0 + m1 * b1);
        QUELL_STORE(next + i, k);
        const V g = QUELL_LOAD(gain + i);
        QUELL_STORE(forward0New + i, QUELL_LOAD(forward0Old + i) + g * p0);
        QUELL_STORE(forward1New + i, QUELL_LOAD(forward1Old + i) + g * p1);
        QUELL_STORE(backward0 + i, b0 + k * s0);
        QUELL_STORE(backward1 + i, b1 + k * s1);
        dot += k * QUELL_LOAD(v + i);
    }
    double gainDot = sum(dot, V{});
    for (; i < n; ++i) {
        next[i] = ((gain[i - 2] - forward0Old[i - 2] * step.c[0]) - forward1Old[i - 2] * step.c[1])
                  + (step.extendedLast[0] * backward0[i] + step.extendedLast[1] * backward1[i]);
        forward0New[i] = forward0Old[i] + gain[i] * step.forwardPosterior[0];
        forward1New[i] = forward1Old[i] + gain[i] * step.forwardPosterior[1];
        backward0[i] += next[i] * step.backwardStep[0];
        backward1[i] += next[i] * step.backwardStep[1];
        gainDot += next[i] * v[i];
    }
    return gainDot;
}

#undef QUELL_LOAD
#undef QUELL_STORE

} // namespace quell::dsp::detail
