// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Host-side entry points of the RLS device code: the persistent kernel instantiated for each
// (column chunks, register groups) pair the launch policy may pick, and the P = I/delta initialiser.
#include <cuda_runtime.h>

#include <cstddef>

#include "rls/RlsKernelParams.cuh"

namespace quell::gpu::rls {

using PersistentKernel = void (*)(KernelParams);

// nullptr when the pair is not instantiated (see RlsPersistentKernel.cu for the list). cluster: the
// variant that exchanges through distributed shared memory inside one thread-block cluster per channel
// (must be launched with a cluster dimension equal to the blocks per channel).
// inputs: far-end channels stacked in u (1 or 2).
PersistentKernel persistentKernelFor(int columnChunks, int registerGroups, bool cluster = false, int inputs = 1);

// trace[c] = the sum of P's diagonal of channel c, for every channel (device memory).
void launchTrace(const float* P, int channels, std::size_t pStride, int columns, int taps, double* trace,
                 cudaStream_t stream);

// P of every channel = I * diag on its first `taps` rows and columns, zero elsewhere (padding included).
void launchIdentity(float* P, int channels, std::size_t pStride, int rows, int columns, int taps, float diag,
                    cudaStream_t stream);

} // namespace quell::gpu::rls
