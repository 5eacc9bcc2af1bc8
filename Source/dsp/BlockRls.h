// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Block-exact RLS: the same outputs as the per-sample RLS (dsp/Rls.h) up to rounding, with one pass over
// P per block of k samples instead of one per sample. The CPU twin of the GPU block kernel
// (Kernels/rls/GpuBlockRls.h) and its float64 reference.
//
// With P0, w0 at the start of a block and U = [u_1 .. u_k] the block's regressors:
//   V = P0 U, G = U^T V, y0 = U^T w0 (the only passes over N-sized data), then a k-step recurrence on
//   k x k data, in float64 whatever T is. With mu_0 = 1, A_0 = 0, b_0 = 0, for j = 1..k:
//     e_j     = d_j - y0_j - b_{j-1}^T G i_j             (the a-priori error: the canceller's output)
//     c_j     = mu_{j-1} (i_j - A_{j-1} G i_j),  gamma_j = (G i_j)^T c_j   (u_j^T P_{j-1} u_j)
//     b_j     = b_{j-1} + c_j e_j / (lambda_j + gamma_j)
//     A_j     = A_{j-1} + s_j c_j c_j^T,  s_j = 1 / (mu_{j-1} (lambda_j + gamma_j)),  mu_j = mu_{j-1} / lambda_j
//   and after the block w = w0 + V b_k, P = mu_k (P0 - sum_j (sqrt(s_j) V c_j)(sqrt(s_j) V c_j)^T).
// Holding P_j = mu_j (P0 - V A_j V^T) and w_j = w0 + V b_j, this is the per-sample recursion step for step
// (the algebra with lambda^-(j-1) generalised to mu_j, so a sample may forget with lambda, not
// forget (the bounded trace: lambda_j = 1) or not adapt at all (paused: nothing changes)).
//
// Why this form:
//  - The update of P is a sum of k rank-one terms z_l z_l^T with z_l = sqrt(s_l) V c_l (s_l > 0): the
//    product z_il z_jl is formed first, so p_ij and p_ji receive bit-identical updates (P exactly
//    symmetric without mirroring), as in the per-sample kernel.
//  - The update of block b is deferred and fused with V = P U of block b + 1, row by row: each element
//    of P is read and written once per block (the per-sample order of paper 001, from 1 column to k).
//  - Every V column is an independent dot product in a fixed order and every recurrence step depends only
//    on earlier columns, so a block that arrives in several calls gives bit-identical results to one
//    that arrives whole: the output does not depend on how the input is split.
//
// The per-sample safeguards, each at the same sample as in dsp::Rls:
//  - paused adaptation (far-end power below the floor, or setAdaptation(false)): the step changes nothing;
//  - the bounded trace, checked every traceCheckSamples samples: trace(P_{j-1}) = mu (trace(P0) -
//    sum_{l<j} s_l |V c_l|^2), computed at the check, decides lambda_j from then on;
//  - loss of positive definiteness (lambda_j + gamma_j < lambda_j / 2, or a non-finite value): the rest
//    of the block is held (no adaptation; counted as paused), and at the block's end w is committed and
//    P = I / delta. The per-sample RLS restarts at once; holding keeps the block boundaries where they
//    were, so the GPU twin needs no round trip to the host, and costs at most k - 1 samples of adaptation
//    in an event that should not happen at all;
//  - non-finite input samples are replaced by zero and counted.
// Threading: one thread at a time calls process(), which never allocates after prepare().
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dsp/AlignedBuffer.h"
#include "dsp/RlsRegressor.h"
#include "dsp/RlsSettings.h"

namespace quell::dsp {

template <typename T>
class BlockRls {
public:
    static constexpr int kMaxBlock = 256;

    // blockSize: k, 1..kMaxBlock.
    void prepare(const RlsSettings& settings, int blockSize);
    void reset();
    // P = I / delta, w kept; the current block ends here.
    void restartCovariance();
    void setAdaptation(bool on) { adapting_ = on; }
    bool adapting() const { return adapting_; }

    // As dsp::Rls: mic = d, ref = x, out = e, all the same length; out may alias mic.
    void process(std::span<const T> mic, std::span<const T> ref, std::span<T> out);
    void processInterleaved(std::span<const T> mic, std::span<const T> ref, std::span<T> out);

    // The weights after the last sample processed (w0 + V b of the block so far).
    std::span<const T> weights() const { return {w_.data(), static_cast<std::size_t>(taps_)}; }
    const RlsHealth& health() const { return health_; }
    const RlsSettings& settings() const { return settings_; }
    int taps() const { return taps_; }
    int blockSize() const { return block_; }

private:
    void run(std::span<const T> mic, std::span<const T> ref, std::span<T> out, std::size_t channels);
    void appendColumn(int column, T d, const T* x);
    void computeColumns(int begin, int end);
    T step(int j);
    void finishBlock();
    void combineColumns(const double* coefficients, int count) const; // scratch_ = V coefficients
    void addBlockWeights(T* dst, int steps) const;
    void commitWeights(int steps);
    double traceBefore(int j) const;
    void reinitialiseP();
    void clearRecurrence();

    // Row r of a k x k float64 matrix (row-major, rows of block_).
    double* row(std::vector<double>& m, int r) { return m.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(block_); }
    const double* row(const std::vector<double>& m, int r) const
    {
        return m.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(block_);
    }

    RlsSettings settings_{};
    int taps_ = 0, block_ = 0;
    std::size_t stride_ = 0;
    double lambda_ = 1.0, lambdaNow_ = 1.0, traceBound_ = 0.0;
    int sinceCheck_ = 0;
    bool adapting_ = true;
    bool restartDue_ = false; // P lost definiteness in this block: the rest is held, P restarts at its end

    AlignedBuffer<T> p_, w0_, w_;
    RlsRegressor<T> u_;
    AlignedBuffer<T> U_, V_, Z_;   // k rows of stride_: the block's regressors, P0 u_j, the pending update
    std::vector<T> zi_;            // column i of the pending update, gathered per row
    int pendingCount_ = 0;         // rows of Z_ in the pending update
    T pendingMu_ = T(1);
    bool pending_ = false;
    double traceP0_ = 0.0;

    // The block's recurrence (float64): G (lower triangle: G(j, a), a <= j), y0, d, paused flags, A, b,
    // the c_l (row l of C) and s_l of every step, mu.
    std::vector<double> G_, A_, C_, y0_, d_, b_, s_;
    std::vector<unsigned char> paused_;
    mutable std::vector<double> scratch_; // N-sized float64 accumulator
    double mu_ = 1.0;
    int columns_ = 0; // columns appended to the block (and stepped) so far

    RlsHealth health_{};
};

extern template class BlockRls<float>;
extern template class BlockRls<double>;

} // namespace quell::dsp
