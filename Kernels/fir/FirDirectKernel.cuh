// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Direct FIR for short filters. One block computes a tile of TILE = THREADS * R outputs of one channel:
// the tile's inputs and the halo of taps-1 samples before it are read from global memory once into shared
// memory (paper 002's tile + apron), the taps into shared memory too. Each thread then produces R
// consecutive outputs with register blocking: for each block of R taps it reads a 2R-sample window with
// 16-byte vector loads (paper 003: aligned 4-wide access; the halo is offset so every window starts on a
// 16-byte boundary) and does R x R fused multiply-adds.
// Shared layout: one float4 of padding after every 8 float4s, so the strided float4 reads of a quarter
// warp fall in distinct banks.
#include <cuda_runtime.h>

#include "fir/FirHistory.cuh"

namespace quell::gpu::fir {

// Two shapes: R = 16 outputs per thread x 128 threads (more reuse per shared-memory read) and R = 8 x 256
// threads (fewer registers, more blocks resident); both tiles hold 2048 outputs.
constexpr int kDirectTile = 2048;
template <int R>
constexpr int directThreads() { return kDirectTile / R; }

__host__ __device__ constexpr int paddedFloat(int f) { return f + 4 * (f >> 5); }

// Shared memory: taps (roundUp(L, R) floats) then the padded input window.
__host__ __device__ constexpr int directHalo(int taps, int r) { return (taps + r - 1) / r * r - 1; }
inline std::size_t directSharedBytes(int taps, int r)
{
    const int tapsPadded = directHalo(taps, r) + 1;
    const int window = directHalo(taps, r) + kDirectTile + 4;
    return sizeof(float) * (static_cast<std::size_t>(tapsPadded) + static_cast<std::size_t>(paddedFloat(window + 31)));
}

// grid: (tiles per channel, channels). Out16: output rows are 16-byte aligned (vector stores). In16: input
// rows are 16-byte aligned, so a tile's window away from the channel's ends is read with 16-byte loads. A
// non-null newHist gets the channel's next history from the last tile's block (one launch less per call than
// a separate history kernel; the history buffers ping-pong, so no block reads what it writes).
template <int R, bool Out16, bool In16 = false>
__global__ void __launch_bounds__(directThreads<R>()) firDirect(const float* __restrict__ in, float* __restrict__ out,
                                                                long long stride, long long samples,
                                                                const float* __restrict__ taps, int tapCount,
                                                                const float* __restrict__ hist, float* __restrict__ newHist)
{
    constexpr int kDirectThreads = directThreads<R>();
    extern __shared__ float4 shared4[];
    float* shared = reinterpret_cast<float*>(shared4);
    const int halo = directHalo(tapCount, R);
    const int tapsPadded = halo + 1;
    float* h = shared;                 // tapsPadded floats (a multiple of R, so 16-byte aligned)
    float* win = shared + tapsPadded;  // padded window: win[paddedFloat(i)] = x[start - halo + i]
    const long long c = blockIdx.y;
    const long long start = static_cast<long long>(blockIdx.x) * kDirectTile;
    const float* x = in + c * stride;
    const float* hc = hist + c * static_cast<long long>(tapCount - 1);

    for (int k = threadIdx.x; k < tapsPadded; k += kDirectThreads)
        h[k] = k < tapCount ? __ldg(taps + k) : 0.0f;
    const int windowLen = halo + kDirectTile + 1;
    const long long first = start - halo; // x index of window index 0
    if (In16 && first >= 0 && first + windowLen <= samples) {
        // Window index i holds x[first + i]; the 16-byte aligned x run starts at window index halo % 4 (start
        // is a multiple of 4). Shared stores stay scalar: the padded window is not 16-byte aligned there.
        const int head = halo & 3;
        const int quads = (windowLen - head) >> 2;
        const float4* x4 = reinterpret_cast<const float4*>(x + first + head);
        for (int q = threadIdx.x; q < quads; q += kDirectThreads) {
            const float4 v = __ldg(x4 + q);
            const int i = head + 4 * q;
            win[paddedFloat(i)] = v.x;
            win[paddedFloat(i + 1)] = v.y;
            win[paddedFloat(i + 2)] = v.z;
            win[paddedFloat(i + 3)] = v.w;
        }
        const int rest = windowLen - 4 * quads; // head, then the tail after the last whole quad
        if (threadIdx.x < rest) {
            const int i = threadIdx.x < head ? threadIdx.x : 4 * quads + threadIdx.x;
            win[paddedFloat(i)] = __ldg(x + first + i);
        }
    } else {
        for (int i = threadIdx.x; i < windowLen; i += kDirectThreads)
            win[paddedFloat(i)] = inputOrHistory(x, hc, tapCount - 1, samples, first + i);
    }
    if (newHist != nullptr && blockIdx.x == gridDim.x - 1) {
        const long long len = tapCount - 1;
        for (long long j = threadIdx.x; j < len; j += kDirectThreads)
            newHist[c * len + j] = inputOrHistory(x, hc, len, samples, samples - len + j);
    }
    __syncthreads();

    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
        acc[r] = 0.0f;
    const int base = threadIdx.x * R + halo - (R - 1); // window index of x[o - k0 - (R-1)] at k0 = 0
    for (int k0 = 0; k0 < tapsPadded; k0 += R) {
        float xw[2 * R];
        const int w0 = base - k0; // a multiple of 4: halo = R-1 (mod R)
#pragma unroll
        for (int v = 0; v < 2 * R / 4; ++v) {
            const float4 q = *reinterpret_cast<const float4*>(win + paddedFloat(w0 + 4 * v));
            xw[4 * v] = q.x;
            xw[4 * v + 1] = q.y;
            xw[4 * v + 2] = q.z;
            xw[4 * v + 3] = q.w;
        }
        float hk[R];
#pragma unroll
        for (int v = 0; v < R / 4; ++v) {
            const float4 q = *reinterpret_cast<const float4*>(h + k0 + 4 * v);
            hk[4 * v] = q.x;
            hk[4 * v + 1] = q.y;
            hk[4 * v + 2] = q.z;
            hk[4 * v + 3] = q.w;
        }
#pragma unroll
        for (int kk = 0; kk < R; ++kk)
#pragma unroll
            for (int r = 0; r < R; ++r)
                acc[r] = fmaf(hk[kk], xw[r - kk + R - 1], acc[r]);
    }

    const long long o = start + static_cast<long long>(threadIdx.x) * R;
    float* y = out + c * stride + o;
    if (Out16 && o + R <= samples) {
#pragma unroll
        for (int v = 0; v < R / 4; ++v)
            __stcs(reinterpret_cast<float4*>(y) + v, make_float4(acc[4 * v], acc[4 * v + 1], acc[4 * v + 2], acc[4 * v + 3]));
    } else {
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (o + r < samples)
                y[r] = acc[r];
    }
}

} // namespace quell::gpu::fir
