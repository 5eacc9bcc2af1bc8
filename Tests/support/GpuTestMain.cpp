// SPDX-License-Identifier: GPL-3.0-or-later
// Main of the [gpu] test program: with no usable CUDA device it says why and exits 77, which ctest
// reports as "skipped" (SKIP_RETURN_CODE), so CI without a GPU passes honestly rather than vacuously.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "common/GpuDevice.h"

int main(int argc, char* argv[])
{
    const quell::gpu::DeviceInfo device = quell::gpu::queryDevice();
    if (!device.available) {
        std::printf("SKIPPED: the [gpu] tests need a CUDA device; %s\n", device.description.c_str());
        return 77;
    }
    std::printf("GPU tests on %s\n", device.description.c_str());
    return Catch::Session().run(argc, argv);
}
