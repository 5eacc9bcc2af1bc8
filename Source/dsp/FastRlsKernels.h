// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The two passes over memory that one sample of dsp::FastRls makes, vectorised, with an AVX2 clone picked
// at run time. Before, it made four (three dot products, the next gain, the predictors' update, the
// weights' update), with the sums in one scalar chain each. The sums here are taken over a fixed
// layout of eight partial sums, so the AVX2 clone and the baseline give the same bits. Any n; pointers
// need only the alignment of a double.
#include <cstddef>

namespace quell::dsp::detail {

struct FastRlsDots {
    double forward = 0.0;   // sum forward[i] v[i + 1]
    double backward = 0.0;  // sum backward[i] v[i]
    double echo = 0.0;      // sum w[i] u[i], with w updated first
};

// First w[i] += gain[i] * step where applyStep (the last sample's weight update, deferred to share this
// pass), then the three a-priori sums. v must hold n + 1 values.
FastRlsDots fastRlsDots(const double* forward, const double* backward, double* w, const double* gain, double step,
                        bool applyStep, const double* v, const double* u, std::size_t n);

// The next gain and both predictors, in one pass:
//   next[i] = gain[i - 1] - forwardOld[i - 1] c + extendedLast backward[i]
//   forwardNew[i] = forwardOld[i] + gain[i] forwardPosterior
//   backward[i] += next[i] backwardStep
// and returns sum next[i] v[i]. gain[-1] and forwardOld[-1] must be readable and hold 0 and -1, which
// makes next[0] = c + extendedLast backward[0]. forwardNew must not overlap forwardOld.
double fastRlsPredictorUpdate(const double* gain, const double* forwardOld, double* forwardNew, double* backward,
                              double* next, const double* v, double c, double extendedLast, double forwardPosterior,
                              double backwardStep, std::size_t n);

// w[i] += gain[i] * step (the deferred update, when no further sample comes to take it).
void fastRlsApplyStep(double* w, const double* gain, double step, std::size_t n);

} // namespace quell::dsp::detail

namespace quell::dsp::detail {

// The same two passes for two far-end channels (dsp::StereoFastRls): the regressor interleaves them
// (x0(n), x1(n), x0(n-1), ..), so n = 2 x taps, and each predictor is a pair of vectors, one per channel
// it predicts.
struct StereoFastRlsDots {
    double forward[2] = {};    // sum forwardK[i] v[i + 2]
    double backward[2] = {};   // sum backwardK[i] v[i]
    double echo = 0.0;         // sum w[i] u[i], with w updated first
};

// v must hold n + 2 values.
StereoFastRlsDots stereoFastRlsDots(const double* forward0, const double* forward1, const double* backward0,
                                    const double* backward1, double* w, const double* gain, double step,
                                    bool applyStep, const double* v, const double* u, std::size_t n);

struct StereoFastRlsStep {
    double c[2];                 // the extended gain's first pair
    double extendedLast[2];      // its last pair
    double forwardPosterior[2];
    double backwardStep[2];
};

// next[i] = gain[i - 2] - forward0Old[i - 2] c0 - forward1Old[i - 2] c1 + extendedLast . (backward0[i], backward1[i])
// forwardKNew[i] = forwardKOld[i] + gain[i] forwardPosteriorK
// backwardK[i] += next[i] backwardStepK
// returns sum next[i] v[i]. gain[-2..-1] must hold 0, forward0Old[-2..-1] -1 and 0, forward1Old[-2..-1]
// 0 and -1, which makes next[0..1] = c + the backward part.
double stereoFastRlsPredictorUpdate(const double* gain, const double* forward0Old, const double* forward1Old,
                                    double* forward0New, double* forward1New, double* backward0, double* backward1,
                                    double* next, const double* v, const StereoFastRlsStep& step, std::size_t n);

} // namespace quell::dsp::detail
