// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Host buffers through device staging, shared by the GPU filter families that take host memory (FIR,
// IIR): planar channels (channel c at c * samples) are copied in chunks of at most `maxSamples` per
// channel into the staging buffers (channel c at c * maxSamples), the output staging is filled with NaN
// first (a sample the kernel failed to write shows up, not a stale one), `runOnDevice` filters the chunk,
// and the chunk is copied back; one synchronisation at the end. The staging buffers are allocated on first
// use (channels x maxSamples each) and kept.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"

namespace quell::gpu {

// runOnDevice(const float* in, float* out, std::size_t samples, std::size_t stride): the device-side
// process of the family, channel c of the chunk at in + c * stride.
template <typename RunOnDevice>
void processThroughStaging(const float* in, float* out, std::size_t samples, std::size_t channels, std::size_t maxSamples,
                           DeviceBuffer<float>& stagingIn, DeviceBuffer<float>& stagingOut, cudaStream_t stream,
                           RunOnDevice&& runOnDevice)
{
    if (samples == 0)
        return;
    if (stagingIn.size() == 0) {
        stagingIn.allocate(channels * maxSamples);
        stagingOut.allocate(channels * maxSamples);
    }
    const std::size_t hostPitch = samples * sizeof(float), devicePitch = maxSamples * sizeof(float);
    for (std::size_t done = 0; done < samples;) {
        const std::size_t n = std::min(samples - done, maxSamples);
        QUELL_CUDA_CHECK(cudaMemcpy2DAsync(stagingIn.get(), devicePitch, in + done, hostPitch, n * sizeof(float), channels,
                                           cudaMemcpyHostToDevice, stream));
        QUELL_CUDA_CHECK(cudaMemsetAsync(stagingOut.get(), 0xff, stagingOut.bytes(), stream));
        runOnDevice(stagingIn.get(), stagingOut.get(), n, maxSamples);
        QUELL_CUDA_CHECK(cudaMemcpy2DAsync(out + done, hostPitch, stagingOut.get(), devicePitch, n * sizeof(float), channels,
                                           cudaMemcpyDeviceToHost, stream));
        done += n;
    }
    QUELL_CUDA_CHECK(cudaStreamSynchronize(stream));
}

} // namespace quell::gpu
