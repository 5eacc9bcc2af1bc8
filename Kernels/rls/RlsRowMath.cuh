// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The arithmetic of the persistent RLS kernel's row pass, on one thread's tile of 4 rows x C4 float4
// columns of P. Numerics follow the CPU twin (quell::dsp::Rls) operation by operation: the update of
// p_ij is written with __fmul_rn / __fsub_rn so nvcc cannot contract it into FMAs; (v_i * v_j) is formed
// first, so p_ij and p_ji receive bit-identical updates and P stays exactly symmetric. The dot products
// may use FMAs (they only change the rounding of v, not the symmetry).
#include <cuda_runtime.h>

namespace quell::gpu::rls {

constexpr unsigned int kFullMask = 0xffffffffu;

__device__ __forceinline__ float sanitised(float x) { return isfinite(x) ? x : 0.0f; }

__device__ __forceinline__ float component(const float4& a, int q)
{
    return q == 0 ? a.x : q == 1 ? a.y : q == 2 ? a.z : a.w;
}
__device__ __forceinline__ float& component(float4& a, int q)
{
    return q == 0 ? a.x : q == 1 ? a.y : q == 2 ? a.z : a.w;
}

// The fused update of 4 rows (this thread's columns) and their partial dot products with u.
template <int C4>
__device__ __forceinline__ void updateTile(float4 (&tile)[4][C4], const float (&vRow)[4], const float4 (&v)[C4],
                                           const float4 (&u)[C4], bool pending, float r, float invLambda,
                                           float (&acc)[4])
{
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        acc[k] = 0.0f;
#pragma unroll
        for (int c = 0; c < C4; ++c) {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                float p = component(tile[k][c], q);
                if (pending)
                    p = __fmul_rn(__fsub_rn(p, __fmul_rn(__fmul_rn(vRow[k], component(v[c], q)), r)), invLambda);
                component(tile[k][c], q) = p;
                acc[k] = fmaf(p, component(u[c], q), acc[k]);
            }
        }
    }
}

// Reduces the 4 row sums over the warp: 6 shuffles instead of 20 (halving exchange). Afterwards lane
// 8k holds the warp's sum of row k.
__device__ __forceinline__ float warpReduceFour(const float (&acc)[4], int lane)
{
    const bool hi = (lane & 16) != 0;
    float keep0 = hi ? acc[2] : acc[0], keep1 = hi ? acc[3] : acc[1];
    const float send0 = hi ? acc[0] : acc[2], send1 = hi ? acc[1] : acc[3];
    keep0 += __shfl_xor_sync(kFullMask, send0, 16);
    keep1 += __shfl_xor_sync(kFullMask, send1, 16);
    const bool hi8 = (lane & 8) != 0;
    float s = hi8 ? keep1 : keep0;
    s += __shfl_xor_sync(kFullMask, hi8 ? keep0 : keep1, 8);
    s += __shfl_xor_sync(kFullMask, s, 4);
    s += __shfl_xor_sync(kFullMask, s, 2);
    s += __shfl_xor_sync(kFullMask, s, 1);
    return s;
}

__device__ __forceinline__ float warpSum(float x)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(kFullMask, x, o);
    return x;
}

} // namespace quell::gpu::rls
