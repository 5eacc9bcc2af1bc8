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
// The block RLS's deferred rank-k update of one row i of P: p_j <- mu (p_j - sum_l zi[l] z_l[j]) for
// l < count, z_l the l-th row of z (stride zStride). The product zi[l] * z_l[j] = z_il z_jl is formed
// first and the terms are subtracted in the same order for every element, so p_ij and p_ji receive
// bit-identical updates and P stays exactly symmetric.
void rankUpdateRow(float* p, const float* z, std::size_t zStride, const float* zi, int count, float mu, std::size_t n);
void rankUpdateRow(double* p, const double* z, std::size_t zStride, const double* zi, int count, double mu,
                   std::size_t n);
float dot(const float* a, const float* b, std::size_t n);
double dot(const double* a, const double* b, std::size_t n);

} // namespace quell::dsp::detail
