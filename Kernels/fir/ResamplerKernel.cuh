// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Polyphase resampling kernel: one thread per output sample. Output m of the call sits at position
// t = t0 + m * M on the upsampled grid; its base input is floor(t / L) and its phase t mod L, and
// y = sum_j taps[phase][j] * x[base - j] (taps[p][j] = h[p + j L], the CPU's phase decomposition).
#include <cuda_runtime.h>

#include "fir/FirHistory.cuh"

namespace quell::gpu::fir {

// grid: (ceil(count / blockDim.x), channels)
static __global__ void polyphaseResample(const float* __restrict__ in, long long inStride, long long samples,
                                  const float* __restrict__ hist, long long histLen,
                                  const float* __restrict__ taps, int tapsPerPhase, long long up, long long down,
                                  unsigned long long t0, unsigned long long inputsBefore, float* __restrict__ out,
                                  long long outStride, long long count)
{
    const long long m = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (m >= count)
        return;
    const long long c = blockIdx.y;
    const unsigned long long t = t0 + static_cast<unsigned long long>(m) * static_cast<unsigned long long>(down);
    const long long base = static_cast<long long>(t / static_cast<unsigned long long>(up) - inputsBefore);
    const int phase = static_cast<int>(t % static_cast<unsigned long long>(up));
    const float* h = taps + static_cast<long long>(phase) * tapsPerPhase;
    const float* x = in + c * inStride;
    const float* hc = hist + c * histLen;
    float acc = 0.0f;
    for (int j = 0; j < tapsPerPhase; ++j)
        acc = fmaf(__ldg(h + j), inputOrHistory(x, hc, histLen, samples, base - j), acc);
    out[c * outStride + m] = acc;
}

} // namespace quell::gpu::fir
