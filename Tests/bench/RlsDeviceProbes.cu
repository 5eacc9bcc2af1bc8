// SPDX-License-Identifier: GPL-3.0-or-later
// Device probes (see RlsDeviceProbes.h). The grid-barrier floor: an empty persistent kernel that only meets at the
// barrier, launched cooperatively with the grid of the RLS kernel.
#include "RlsDeviceProbes.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"
#include "rls/RlsGridBarrier.cuh"

namespace quell::gpu {
namespace {

__global__ void counterBarrierLoop(unsigned int* counter, int iterations)
{
    for (int i = 0; i < iterations; ++i)
        rls::groupBarrier(counter, static_cast<unsigned int>(i + 1) * gridDim.x);
}

__global__ void cooperativeGroupsBarrierLoop(unsigned int*, int iterations)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    for (int i = 0; i < iterations; ++i)
        grid.sync();
}

} // namespace

double measureGridBarrierMicroseconds(int blocks, int threads, int iterations, GridBarrierKind kind)
{
    DeviceBuffer<unsigned int> counter(1);
    Stream stream;
    Event start, stop;
    const void* fn = kind == GridBarrierKind::GenerationCounter ? reinterpret_cast<const void*>(counterBarrierLoop)
                                                                : reinterpret_cast<const void*>(cooperativeGroupsBarrierLoop);
    unsigned int* counterPtr = counter.get();
    auto launch = [&](int n) {
        QUELL_CUDA_CHECK(cudaMemsetAsync(counterPtr, 0, sizeof(unsigned int), stream.get()));
        void* args[] = {&counterPtr, &n};
        QUELL_CUDA_CHECK(cudaLaunchCooperativeKernel(fn, dim3(blocks), dim3(threads), args, 0, stream.get()));
    };
    launch(100); // warm-up
    start.record(stream.get());
    launch(iterations);
    stop.record(stream.get());
    return 1000.0 * static_cast<double>(stop.since(start)) / iterations;
}

double measureCopyBandwidthGBps(std::size_t bytes, int repeats)
{
    DeviceBuffer<unsigned char> a(bytes), b(bytes);
    Stream stream;
    QUELL_CUDA_CHECK(cudaMemsetAsync(a.get(), 1, bytes, stream.get()));
    QUELL_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream.get())); // warm-up
    double best = 0.0;
    for (int i = 0; i < repeats; ++i) {
        Event start, stop;
        start.record(stream.get());
        QUELL_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
        stop.record(stream.get());
        const double seconds = 1e-3 * static_cast<double>(stop.since(start));
        best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds / 1e9);
    }
    return best;
}

double fp32PeakTflops()
{
    int device = 0, sms = 0, clockKhz = 0;
    QUELL_CUDA_CHECK(cudaGetDevice(&device));
    QUELL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    QUELL_CUDA_CHECK(cudaDeviceGetAttribute(&clockKhz, cudaDevAttrClockRate, device));
    return static_cast<double>(sms) * 128.0 * 2.0 * clockKhz * 1e3 / 1e12;
}

} // namespace quell::gpu
