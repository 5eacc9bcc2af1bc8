// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The inner loops of the CPU RLS: the fused row update p <- (p - (vi v) r) / lambda with v'_i = p . u,
// and a plain dot product. Vectorised, with an AVX2 clone picked at run time.
// n must be a multiple of 16 and every pointer 64-byte aligned.
#include <cstddef>

namespace quell::dsp::detail {

float rowUpdateDot(float* p, const float* v, float vi, float r, float invLambda, const float* u, std::size_t n);
double rowUpdateDot(double* p, const double* v, double vi, double r, double invLambda, const double* u,
                    std::size_t n);
float dot(const float* a, const float* b, std::size_t n);
double dot(const double* a, const double* b, std::size_t n);

} // namespace quell::dsp::detail
