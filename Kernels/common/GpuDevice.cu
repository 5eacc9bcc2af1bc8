// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/GpuDevice.h"

#include <cuda_runtime.h>

#include <string>

namespace quell::gpu {

DeviceInfo queryDevice()
{
    DeviceInfo info;
    int count = 0;
    // With no GPU the runtime reports cudaErrorInsufficientDriver or cudaErrorNoDevice rather than 0.
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        info.description = std::string("no CUDA device: ") + cudaGetErrorName(status) + " ("
                           + cudaGetErrorString(status) + ")";
        cudaGetLastError(); // clear the sticky-free error so later calls start clean
        return info;
    }
    if (count == 0) {
        info.description = "no CUDA device: the driver reports none";
        return info;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        info.description = "no CUDA device: cannot read the properties of device 0";
        cudaGetLastError();
        return info;
    }
    info.available = true;
    info.multiprocessors = prop.multiProcessorCount;
    info.computeMajor = prop.major;
    info.computeMinor = prop.minor;
    info.sharedMemoryPerBlockOptin = prop.sharedMemPerBlockOptin;
    info.globalMemoryBytes = prop.totalGlobalMem;
    info.description = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor)
                       + ", " + std::to_string(prop.multiProcessorCount) + " SMs)";
    return info;
}

} // namespace quell::gpu
