// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Streaming history of a FIR-like stage: the last `len` inputs of each channel, oldest first
// (hist[j] = x[j - len]), carried across calls. A call reads x[n] for n < 0 from the history; afterwards
// the new history is built from the call's input and the old history (ping-pong buffers, so a launch
// never reads what it writes).
#include <cuda_runtime.h>

namespace quell::gpu::fir {

// x[n] of a channel for n in [-len, samples): the call's input or the carried history.
__device__ __forceinline__ float inputOrHistory(const float* __restrict__ x, const float* __restrict__ hist,
                                                long long len, long long samples, long long n)
{
    if (n >= 0)
        return n < samples ? __ldg(x + n) : 0.0f;
    return n >= -len ? __ldg(hist + len + n) : 0.0f;
}

// grid: (ceil(len / blockDim.x), channels)
static __global__ void updateHistory(const float* __restrict__ in, long long stride, long long samples,
                              const float* __restrict__ oldHist, float* __restrict__ newHist, long long len)
{
    const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (j >= len)
        return;
    const long long c = blockIdx.y;
    const long long n = samples - len + j; // newHist[j] = x[samples - len + j]
    newHist[c * len + j] = inputOrHistory(in + c * stride, oldHist + c * len, len, samples, n);
}

} // namespace quell::gpu::fir
