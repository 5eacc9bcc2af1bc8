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
