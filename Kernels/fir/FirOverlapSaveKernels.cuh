// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Overlap-save FFT convolution for long filters, around cuFFT: frames of N inputs advancing by
// step = N - L + 1 (each frame starts L-1 samples before the outputs it yields), R2C, multiply by the
// filter's spectrum (pre-scaled by 1/N), C2R, keep the last `step` samples of each frame.
#include <cuda_runtime.h>
#include <cufft.h>

#include "fir/FirHistory.cuh"

namespace quell::gpu::fir {

// grid: (ceil(N / blockDim.x), frames per channel, channels)
static __global__ void gatherFrames(const float* __restrict__ in, long long stride, long long samples,
                             const float* __restrict__ hist, long long histLen, float* __restrict__ frames,
                             long long n, long long step, long long framesPerChannel)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const long long f = blockIdx.y, c = blockIdx.z;
    const long long t = f * step - histLen + i;
    frames[(c * framesPerChannel + f) * n + i] = inputOrHistory(in + c * stride, hist + c * histLen, histLen, samples, t);
}

// spectra[b][k] *= filter[k], for all frames b. Grid-stride over bins * frames.
static __global__ void multiplySpectra(cufftComplex* __restrict__ spectra, const cufftComplex* __restrict__ filter,
                                long long bins, long long total)
{
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const cufftComplex a = spectra[i];
        const cufftComplex b = __ldg(filter + i % bins);
        spectra[i] = make_cuFloatComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
    }
}

// grid: (ceil(step / blockDim.x), frames per channel, channels)
static __global__ void scatterFrames(const float* __restrict__ frames, float* __restrict__ out, long long stride,
                              long long samples, long long n, long long step, long long skip,
                              long long framesPerChannel)
{
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long f = blockIdx.y, c = blockIdx.z;
    const long long t = f * step + i;
    if (i >= step || t >= samples)
        return;
    __stcs(out + c * stride + t, frames[(c * framesPerChannel + f) * n + skip + i]);
}

} // namespace quell::gpu::fir
