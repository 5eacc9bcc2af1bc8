// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The batched Kalman filter's per-stream work between blocks (PbfdkfBlockKernel.cuh holds the block
// step): a stream's controls, asked by its canceller between calls, and every stream's weights as taps
// for the cancellers' foreground copies. One thread block per stream in each launch.
#include <cuda_runtime.h>

#include "kalman/GpuBatchedPbfdkf.h"
#include "kalman/PbfdkfBlockKernel.cuh"

namespace quell::gpu::kalman {

// controls: [stream] on the device, GpuBatchedPbfdkf::Control values.
void launchStreamControls(const BatchGeometry& g, const BatchState& state, const unsigned char* controls, cudaStream_t stream);

// taps: [stream][g.taps] on the device, tap 0 the newest sample (dsp::Pbfdkf::weights()'s layout).
void launchWeightTaps(const BatchGeometry& g, const BatchState& state, float* taps, int threadsPerStream, cudaStream_t stream);

} // namespace quell::gpu::kalman
