// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the two many-streams benchmarks (streams: an engine per stream; multistream: one
// MultiStreamCanceller) share: the scene every stream cancels (20 s of coloured noise through a decaying
// 100 ms path at 16 kHz, each stream reading its own stretch), and the machine's description and
// backends (the GPU's rows first where there is one).
#include <thread>
#include <vector>

#include "BenchReport.h"
#include "aec/EchoCancellerSettings.h"
#include "common/GpuDevice.h"
#include "support/Signals.h"

namespace quell::bench {

struct StreamsScene {
    std::vector<float> mic, ref;
};

inline StreamsScene streamsScene(int rate)
{
    const auto x = test::colouredNoise(static_cast<std::size_t>(rate) * 20, 1, 0.1);
    const auto h = test::randomSystem(1600, 2, 400.0);
    return {test::cast<float>(test::convolve(x, h)), test::cast<float>(x)};
}

inline std::vector<aec::Backend> streamsBackends(BenchReport& report, double seconds)
{
    const gpu::DeviceInfo dev = gpu::queryDevice();
    report.setInfo("device", dev.available ? dev.description : ("none: " + dev.description));
    report.setInfo("seconds per row", seconds);
    report.setInfo("cores", static_cast<double>(std::thread::hardware_concurrency()));
    std::vector<aec::Backend> backends;
    if (dev.available)
        backends.push_back(aec::Backend::Gpu);
    backends.push_back(aec::Backend::Cpu);
    return backends;
}

} // namespace quell::bench
