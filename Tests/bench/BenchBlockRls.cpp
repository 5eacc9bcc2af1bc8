// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench blockrls: the block-exact GPU RLS (k samples per pass over P) beside the per-sample
// kernel, single channel, N = 256 ... 8192 and k = 16 ... 256, all measured in this run:
//  - samples/s from the kernels' device time (events around each call), and end-to-end (wall clock,
//    staging and copies included);
//  - achieved FP32 rate against the device's peak: 4 N^2 flops per sample (V = P U and the rank-k update
//    of P, 2 N^2 k each per block), the Gram products and the recurrence not counted;
//  - achieved bandwidth on P: 3 x 4 N^2 bytes per block (the update reads and writes P, V reads it),
//    against the measured copy bandwidth.
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "RlsDeviceProbes.h"
#include "common/GpuDevice.h"
#include "rls/GpuBlockRls.h"
#include "rls/GpuRls.h"

namespace {

using Clock = std::chrono::steady_clock;

void makeSignals(std::size_t n, std::vector<float>& x, std::vector<float>& d)
{
    std::mt19937 rng(11u);
    std::normal_distribution<float> g(0.0f, 0.1f);
    x.resize(n);
    d.resize(n);
    for (auto& v : x)
        v = g(rng);
    for (std::size_t i = 0; i < n; ++i)
        d[i] = (i >= 3 ? 0.5f * x[i - 3] : 0.0f) + 1e-3f * g(rng);
}

struct Rate {
    double kernel = 0.0, wall = 0.0;
};

// Samples/s of a filter with process(mic, ref, out, n) and lastKernelMilliseconds(), after a warm-up.
template <typename Filter>
Rate measure(Filter& f, std::size_t samples)
{
    std::vector<float> x, d, e(samples);
    makeSignals(samples + 4096, x, d);
    f.process(d.data(), x.data(), e.data(), 4096);
    const auto t0 = Clock::now();
    f.process(d.data() + 4096, x.data() + 4096, e.data(), samples);
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    return {static_cast<double>(samples) / (1e-3 * f.lastKernelMilliseconds()), static_cast<double>(samples) / wall};
}

} // namespace

QUELL_BENCH_COMMAND(blockrls, "GPU block-exact RLS: samples/s, FLOP/s and bandwidth over N and k, beside the per-sample kernel")
{
    const quell::gpu::DeviceInfo dev = quell::gpu::queryDevice();
    if (!dev.available) {
        std::fprintf(stderr, "quell-bench blockrls: %s\n", dev.description.c_str());
        return 1;
    }
    quell::bench::BenchReport report("blockrls");
    report.setInfo("device", dev.description);
    const double copyGBps = quell::gpu::measureCopyBandwidthGBps(256u << 20, 5);
    const double peak = quell::gpu::fp32PeakTflops();
    report.setInfo("copy bandwidth GB/s (D2D, read+write)", copyGBps);
    report.setInfo("FP32 peak TFLOP/s", peak);
    std::printf("device: %s\ncopy bandwidth %.0f GB/s, FP32 peak %.1f TFLOP/s\n", dev.description.c_str(), copyGBps, peak);
    std::fflush(stdout);

    std::vector<int> tapList = args.quick ? std::vector<int>{256, 1024} : std::vector<int>{256, 512, 1024, 2048, 4096, 8192};
    std::vector<int> blockList = args.quick ? std::vector<int>{32, 64} : std::vector<int>{16, 32, 64, 128, 256};
    if (!args.taps.empty())
        tapList = args.taps;
    if (!args.steps.empty())
        blockList = args.steps;
    for (const int taps : tapList) {
        quell::dsp::RlsSettings s;
        s.tapsPerChannel = taps;
        const std::size_t samples = args.quick ? 8192 : (taps >= 4096 ? 16384 : 32768);
        double perSample = 0.0;
        if (taps <= quell::gpu::kGpuRlsMaxTaps) {
            try {
                quell::gpu::GpuRls single;
                single.prepare(s, 1, 4096);
                perSample = measure(single, taps >= 4096 ? 8192 : samples).kernel;
            } catch (const std::exception& e) {
                std::printf("  N=%d per-sample kernel skipped: %s\n", taps, e.what());
            }
        }
        for (const int k : blockList) {
            quell::gpu::GpuBlockRls block;
            block.prepare(s, k, 4096);
            const Rate r = measure(block, samples);
            const double n2 = static_cast<double>(taps) * taps;
            const double tflops = r.kernel * 4.0 * n2 / 1e12;
            const double gbps = r.kernel / k * 12.0 * n2 / 1e9;
            report.add("block RLS, single channel",
                       {{"N", static_cast<long long>(taps)},
                        {"k", static_cast<long long>(k)},
                        {"samples/s (kernel)", r.kernel},
                        {"samples/s end-to-end", r.wall},
                        {"per-sample kernel samples/s", perSample},
                        {"speed-up", perSample > 0.0 ? r.kernel / perSample : 0.0},
                        {"TFLOP/s", tflops},
                        {"fraction of FP32 peak", tflops / peak},
                        {"P GB/s", gbps},
                        {"fraction of copy bandwidth", gbps / copyGBps},
                        {"x real time at 16 kHz", r.kernel / 16000.0}});
            std::printf("N=%d k=%d: %.0f samples/s (per-sample kernel %.0f), %.2f TFLOP/s (%.1f%% of peak), %.0f GB/s\n", taps, k,
                        r.kernel, perSample, tflops, 100.0 * tflops / peak, gbps);
            std::fflush(stdout);
        }
    }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
