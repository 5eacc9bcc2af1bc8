// SPDX-License-Identifier: GPL-3.0-or-later
#include "BlockRlsCublasProbe.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"

namespace quell::gpu {

namespace {

void check(cublasStatus_t status, const char* what)
{
    if (status != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string("cuBLAS: ") + what + " failed with status " + std::to_string(static_cast<int>(status)));
}

struct Handle {
    cublasHandle_t h = nullptr;
    Handle() { check(cublasCreate(&h), "cublasCreate"); }
    ~Handle() { cublasDestroy(h); }
};

template <typename Call>
double medianUs(const Stream& stream, int repeats, Call&& call)
{
    Event start, stop;
    call();   // warm-up (cuBLAS picks and loads its kernel)
    stream.synchronize();
    std::vector<double> us;
    for (int i = 0; i < repeats; ++i) {
        start.record(stream.get());
        call();
        stop.record(stream.get());
        us.push_back(1000.0 * stop.since(start));
    }
    std::nth_element(us.begin(), us.begin() + static_cast<std::ptrdiff_t>(us.size() / 2), us.end());
    return us[us.size() / 2];
}

} // namespace

CublasBlockPasses measureCublasBlockPasses(int taps, int k, int streams, int repeats)
{
    const int S = (taps + 63) / 64 * 64;
    const std::size_t n = static_cast<std::size_t>(streams);
    const long long strideP = static_cast<long long>(S) * S, strideU = static_cast<long long>(S) * k;
    DeviceBuffer<float> P, U, V, Z;
    P.allocate(n * static_cast<std::size_t>(strideP));
    U.allocate(n * static_cast<std::size_t>(strideU));
    V.allocate(n * static_cast<std::size_t>(strideU));
    Z.allocate(n * static_cast<std::size_t>(strideU));
    // Values of the RLS's scale: P near I / delta, small columns (cuBLAS's speed does not depend on them).
    QUELL_CUDA_CHECK(cudaMemset(P.get(), 0, P.bytes()));
    QUELL_CUDA_CHECK(cudaMemset(U.get(), 0, U.bytes()));
    QUELL_CUDA_CHECK(cudaMemset(Z.get(), 0, Z.bytes()));
    Stream stream;
    Handle handle;
    check(cublasSetStream(handle.h, stream.get()), "cublasSetStream");
    check(cublasSetMathMode(handle.h, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");   // FP32 throughout, as the kernels
    const float one = 1.0f, zero = 0.0f, beta = 1.0001f, minusOne = -1.0f;
    CublasBlockPasses t;
    // Column-major: P is S x S (symmetric, so its row-major storage is the same matrix), U and V are
    // S x k with leading dimension S (each of the k columns contiguous, as the kernels store them).
    t.productUs = medianUs(stream, repeats, [&] {
        check(cublasSgemmStridedBatched(handle.h, CUBLAS_OP_N, CUBLAS_OP_N, S, k, S, &one, P.get(), S, strideP, U.get(), S, strideU, &zero,
                                        V.get(), S, strideU, streams),
              "V = P U");
    });
    t.updateUs = medianUs(stream, repeats, [&] {
        check(cublasSgemmStridedBatched(handle.h, CUBLAS_OP_N, CUBLAS_OP_T, S, S, k, &minusOne, Z.get(), S, strideU, V.get(), S, strideU,
                                        &beta, P.get(), S, strideP, streams),
              "P = beta P - Z V^T");
    });
    return t;
}

} // namespace quell::gpu
