// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The two filter shapes the single-pass scan runs, written as "systems": a feed-forward map over a thread's
// run of K samples, then a recurrence over that run from a given state. The scan (IirScanKernel.cuh) runs
// the recurrence twice: once from zero state to get the run's carry, once from the true incoming state.
// The same step is mirrored on the host (stepHost) to build the transition matrices in float64.
#include <cuda_runtime.h>

namespace quell::gpu::iir {

// Direct form of order M, DirectFormIir convention. Coefficients: c[0..M] = b[0..M], c[M+j] = a[j], j=1..M.
// State: s[j] = y[-1-j]. Input halo: the M inputs before the run.
template <int M>
struct DirectSystem {
    static constexpr bool kCascade = false;
    static constexpr int D = M;
    static constexpr int HALO = M;
    static constexpr int NCOEF = 2 * M + 1;
    template <int K>
    static constexpr int WORK = K;

    template <int K, typename Real>
    __device__ __forceinline__ static void feedForward(const Real (&c)[NCOEF], const Real (&x)[K + HALO],
                                                       Real (&w)[K])
    {
#pragma unroll
        for (int i = 0; i < K; ++i) {
            Real acc = c[0] * x[HALO + i];
#pragma unroll
            for (int k = 1; k <= M; ++k)
                acc = fma(c[k], x[HALO + i - k], acc);
            w[i] = acc;
        }
    }

    // Limited: stop after `count` samples (state frozen there); used by the last tile of a channel so the
    // owner of the last valid sample ends with the channel's final state.
    template <int K, bool Limited, typename Real>
    __device__ __forceinline__ static void recur(const Real (&c)[NCOEF], const Real (&w)[K], Real (&s)[D],
                                                 Real (&y)[K], int count)
    {
#pragma unroll
        for (int i = 0; i < K; ++i) {
            if (Limited && i >= count)
                break;
            // Oldest terms first, y[n-1] last: the dependency from one output to the next is a single
            // fused multiply-add, the rest of the sum is computed ahead (latency, not throughput, bounds
            // this loop).
            Real acc = w[i];
#pragma unroll
            for (int j = M; j >= 1; --j)
                acc = fma(c[M + j], s[j - 1], acc);
#pragma unroll
            for (int j = M - 1; j > 0; --j)
                s[j] = s[j - 1];
            s[0] = acc;
            y[i] = acc;
        }
    }
};

// Cascade of S biquads (SciPy sign: minus a1, a2), each section in direct form I so that the section
// boundaries carry plain signal values. Coefficients per section q: c[5q..5q+4] = b0, b1, b2, a1, a2.
// State: s[2q] = v_q[-1], s[2q+1] = v_q[-2] (outputs of section q; they are also the next section's
// input history). Input halo: the 2 inputs of section 0 before the run.
template <int S>
struct CascadeSystem {
    static constexpr bool kCascade = true;
    static constexpr int D = 2 * S;
    static constexpr int HALO = 2;
    static constexpr int NCOEF = 5 * S;
    template <int K>
    static constexpr int WORK = K + HALO;

    template <int K, typename Real>
    __device__ __forceinline__ static void feedForward(const Real (&)[NCOEF], const Real (&x)[K + HALO],
                                                       Real (&w)[K + HALO])
    {
#pragma unroll
        for (int i = 0; i < K + HALO; ++i)
            w[i] = x[i];
    }

    template <int K, bool Limited, typename Real>
    __device__ __forceinline__ static void recur(const Real (&c)[NCOEF], const Real (&w)[K + HALO],
                                                 Real (&s)[D], Real (&y)[K], int count)
    {
#pragma unroll
        for (int i = 0; i < K; ++i) {
            if (Limited && i >= count)
                break;
            Real u = w[HALO + i], u1 = w[HALO + i - 1], u2 = w[HALO + i - 2];
#pragma unroll
            for (int q = 0; q < S; ++q) {
                const Real v1 = s[2 * q], v2 = s[2 * q + 1];
                // Oldest terms first; the current input (the previous section's fresh output) last, so the
                // chain through the sections costs one fused multiply-add per section.
                Real v = c[5 * q + 2] * u2;
                v = fma(c[5 * q + 1], u1, v);
                v = fma(-c[5 * q + 4], v2, v);
                v = fma(-c[5 * q + 3], v1, v);
                v = fma(c[5 * q], u, v);
                s[2 * q + 1] = v1;
                s[2 * q] = v;
                u = v;
                u1 = v1;
                u2 = v2;
            }
            y[i] = u;
        }
    }
};

} // namespace quell::gpu::iir
