// SPDX-License-Identifier: GPL-3.0-or-later
// Instantiations of the persistent RLS kernel. The register-resident part of P is a compile-time array
// (registers cannot be indexed at run time), so each (column chunks C4, register groups RG) pair is its
// own kernel; RG * C4 <= 4 keeps P's registers at <= 64 per thread (<= 128 in all at 512 threads). Each
// comes for one and for two far-end channels stacked in u.
#include "rls/RlsKernelDispatch.cuh"
#include "rls/RlsPersistentKernel.cuh"

#include "common/CudaCheck.cuh"

namespace quell::gpu::rls {

namespace {

template <int INPUTS>
PersistentKernel kernelFor(int columnChunks, int registerGroups, bool cluster)
{
    if (cluster) {
        // One cluster of at most 16 blocks per channel: meant for N <= 1024 (<= 256 threads of one
        // float4 chunk), with room for the larger chunk counts should a layout ask for them.
        switch (columnChunks * 16 + registerGroups) {
        case 16 + 0: return persistentRlsKernel<1, 0, true, INPUTS>;
        case 16 + 1: return persistentRlsKernel<1, 1, true, INPUTS>;
        case 16 + 2: return persistentRlsKernel<1, 2, true, INPUTS>;
        case 16 + 4: return persistentRlsKernel<1, 4, true, INPUTS>;
        case 32 + 0: return persistentRlsKernel<2, 0, true, INPUTS>;
        case 32 + 2: return persistentRlsKernel<2, 2, true, INPUTS>;
        default: return nullptr;
        }
    }
    switch (columnChunks * 16 + registerGroups) {
    case 16 + 0: return persistentRlsKernel<1, 0, false, INPUTS>;
    case 16 + 1: return persistentRlsKernel<1, 1, false, INPUTS>;
    case 16 + 2: return persistentRlsKernel<1, 2, false, INPUTS>;
    case 16 + 4: return persistentRlsKernel<1, 4, false, INPUTS>;
    case 32 + 0: return persistentRlsKernel<2, 0, false, INPUTS>;
    case 32 + 1: return persistentRlsKernel<2, 1, false, INPUTS>;
    case 32 + 2: return persistentRlsKernel<2, 2, false, INPUTS>;
    case 64 + 0: return persistentRlsKernel<4, 0, false, INPUTS>;
    case 64 + 1: return persistentRlsKernel<4, 1, false, INPUTS>;
    default: return nullptr;
    }
}

} // namespace

PersistentKernel persistentKernelFor(int columnChunks, int registerGroups, bool cluster, int inputs)
{
    return inputs == 2 ? kernelFor<2>(columnChunks, registerGroups, cluster) : kernelFor<1>(columnChunks, registerGroups, cluster);
}

namespace {

__global__ void identityKernel(float* P, std::size_t pStride, int rows, int columns, int taps, float diag)
{
    const std::size_t total = static_cast<std::size_t>(rows) * columns;
    float* Pc = P + blockIdx.y * pStride;
    for (std::size_t idx = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; idx < total;
         idx += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int i = static_cast<int>(idx / columns), j = static_cast<int>(idx % columns);
        Pc[idx] = (i == j && i < taps) ? diag : 0.0f;
    }
}

// trace[c] = sum of P's diagonal for channel c (one block per channel, a fixed order of additions).
__global__ void traceKernel(const float* P, std::size_t pStride, int columns, int taps, double* trace)
{
    __shared__ double partial[256];
    const float* Pc = P + blockIdx.x * pStride;
    double sum = 0.0;
    for (int i = threadIdx.x; i < taps; i += blockDim.x)
        sum += Pc[static_cast<std::size_t>(i) * columns + i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (static_cast<int>(threadIdx.x) < half)
            partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        trace[blockIdx.x] = partial[0];
}

} // namespace

void launchTrace(const float* P, int channels, std::size_t pStride, int columns, int taps, double* trace,
                 cudaStream_t stream)
{
    traceKernel<<<channels, 256, 0, stream>>>(P, pStride, columns, taps, trace);
    QUELL_CUDA_CHECK_LAUNCH();
}

void launchIdentity(float* P, int channels, std::size_t pStride, int rows, int columns, int taps, float diag,
                    cudaStream_t stream)
{
    const dim3 grid(264, static_cast<unsigned int>(channels));
    identityKernel<<<grid, 256, 0, stream>>>(P, pStride, rows, columns, taps, diag);
    QUELL_CUDA_CHECK_LAUNCH();
}

} // namespace quell::gpu::rls
