// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Block-level complex FFT in shared memory, for the batched Kalman filter's transforms of M = 2B points
// (32 to 512): every thread of the block takes part, the data never leaves shared memory, and a transform
// costs log2(M) barriers. Radix-2, decimation in time: the caller writes its input in bit-reversed order
// (bitReversed()), which it does anyway while building the input from its own arrays, so no separate
// permutation pass is needed. The inverse is scaled by 1/M, as dsp::FftPlan's is.
#include <cuda_runtime.h>

namespace quell::gpu::kalman {

__device__ __forceinline__ int bitReversed(int index, int log2Size)
{
    return static_cast<int>(__brev(static_cast<unsigned>(index)) >> (32 - log2Size));
}

__device__ __forceinline__ float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
__device__ __forceinline__ float2 cconj(float2 a) { return make_float2(a.x, -a.y); }
__device__ __forceinline__ float cnorm(float2 a) { return a.x * a.x + a.y * a.y; }

// twiddles[k] = exp(-2 pi i k / size), k < size / 2.
__device__ inline void fillTwiddles(float2* twiddles, int size)
{
    for (int k = static_cast<int>(threadIdx.x); k < size / 2; k += static_cast<int>(blockDim.x)) {
        float s, c;
        sincospif(-2.0f * static_cast<float>(k) / static_cast<float>(size), &s, &c);
        twiddles[k] = make_float2(c, s);
    }
}

// In place on data (size points, already in bit-reversed order). Starts and ends with a barrier, so the
// caller's writes before it and reads after it need none of their own.
__device__ inline void sharedFft(float2* data, const float2* twiddles, int size, int log2Size, bool inverse)
{
    __syncthreads();
    const int half = size / 2;
    for (int stage = 0; stage < log2Size; ++stage) {
        const int span = 1 << stage;
        const int twiddleStride = half >> stage;
        for (int j = static_cast<int>(threadIdx.x); j < half; j += static_cast<int>(blockDim.x)) {
            const int position = j & (span - 1);
            const int i0 = ((j >> stage) << (stage + 1)) + position;
            const int i1 = i0 + span;
            float2 w = twiddles[position * twiddleStride];
            if (inverse)
                w.y = -w.y;
            const float2 a = data[i0];
            const float2 b = cmul(data[i1], w);
            data[i0] = make_float2(a.x + b.x, a.y + b.y);
            data[i1] = make_float2(a.x - b.x, a.y - b.y);
        }
        __syncthreads();
    }
    if (inverse) {
        const float scale = 1.0f / static_cast<float>(size);
        for (int i = static_cast<int>(threadIdx.x); i < size; i += static_cast<int>(blockDim.x))
            data[i] = make_float2(data[i].x * scale, data[i].y * scale);
        __syncthreads();
    }
}

} // namespace quell::gpu::kalman
