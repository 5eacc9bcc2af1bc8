// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench gpuload: a second process that keeps the GPU busy, as a training job, a game or another
// canceller on the same card would: memory-bound passes over 512 MiB (about 0.2 ms each on an H100),
// launched back to back on its own stream. `quell-bench engine`'s contention rows start it and stop it
// with SIGTERM; it also stops by itself after --seconds (default 600) or when its parent has gone, so a
// crashed benchmark never leaves it running.
#include <cuda_runtime.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>

#include "BenchRegistry.h"
#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void onStop(int) { g_stop = 1; }

__global__ void streamPassKernel(const float4* in, float4* out, std::size_t n)
{
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        float4 v = in[i];
        v.x = v.x * 0.999f + 1e-3f;
        v.y = v.y * 0.999f + 1e-3f;
        v.z = v.z * 0.999f + 1e-3f;
        v.w = v.w * 0.999f + 1e-3f;
        out[i] = v;
    }
}

} // namespace

QUELL_BENCH_COMMAND(gpuload, "keeps the GPU busy until stopped (SIGTERM) or --seconds: the engine's contention rows")
{
    std::signal(SIGTERM, onStop);
    std::signal(SIGINT, onStop);
    const double limit = args.seconds > 0.0 ? args.seconds : 600.0;
    const pid_t parent = getppid();
    const std::size_t n = (std::size_t{256} << 20) / sizeof(float4);   // 256 MiB each way
    quell::gpu::DeviceBuffer<float4> a(n), b(n);
    QUELL_CUDA_CHECK(cudaMemset(a.get(), 0, n * sizeof(float4)));
    cudaStream_t stream = nullptr;
    QUELL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int sms = 0;
    QUELL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const auto start = std::chrono::steady_clock::now();
    unsigned long long passes = 0;
    while (g_stop == 0 && getppid() == parent
           && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < limit) {
        for (int k = 0; k < 16; ++k) {   // ~3 ms of queued work between looks at the stop flag
            streamPassKernel<<<sms * 8, 256, 0, stream>>>(passes % 2 ? b.get() : a.get(), passes % 2 ? a.get() : b.get(), n);
            ++passes;
        }
        QUELL_CUDA_CHECK_LAUNCH();
        QUELL_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    QUELL_CUDA_CHECK(cudaStreamDestroy(stream));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "quell-bench gpuload: %llu passes of 512 MiB in %.1f s (%.0f GB/s)\n", passes, seconds,
                 static_cast<double>(passes) * 2.0 * static_cast<double>(n * sizeof(float4)) / seconds * 1e-9);
    return 0;
}
