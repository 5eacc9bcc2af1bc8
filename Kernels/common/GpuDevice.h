// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Host-side view of the CUDA device: whether one is usable and what it is. Plain C++ (no CUDA headers),
// so Source/ and the front ends can ask without depending on the toolkit.
#include <string>

namespace quell::gpu {

struct DeviceInfo {
    bool available = false;
    std::string description;   // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)" or why there is none
    int multiprocessors = 0;
    int computeMajor = 0, computeMinor = 0;
    std::size_t sharedMemoryPerBlockOptin = 0;
    std::size_t globalMemoryBytes = 0;
};

// Never throws. Any CUDA error (no driver, no device, insufficient driver) reads as "not available"
// with its message in `description`.
DeviceInfo queryDevice();

} // namespace quell::gpu
