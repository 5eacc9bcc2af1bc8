// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Every CUDA call is checked: failures become quell::gpu::CudaError with the call site and CUDA's text.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace quell::gpu {

class CudaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline void check(cudaError_t status, const char* what, const char* file, int line)
{
    if (status != cudaSuccess)
        throw CudaError(std::string(what) + " failed at " + file + ":" + std::to_string(line) + ": "
                        + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

} // namespace quell::gpu

#define QUELL_CUDA_CHECK(call) ::quell::gpu::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors show up here, execution errors at the next sync.
#define QUELL_CUDA_CHECK_LAUNCH() ::quell::gpu::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
