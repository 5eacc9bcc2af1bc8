// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench kalman: how many 16 kHz streams of the frequency-domain Kalman filter one GPU carries in
// real time (issue 14's GPU target: 20,000 at a 256 ms tail), beside the CPU twin on one core, all in
// this run. Each row runs S streams block by block, one process() call per block as a server would
// (host samples in, host samples out, pinned memory), and reports:
//  - the kernel's device time per block and the whole call's wall time (copies and synchronisation
//    included), median and p99.9, against the block's period (B / 16 kHz);
//  - capacity: the streams one GPU would carry with the kernel's median time filling the period;
//  - the state's traffic (each stream's spectra, weights and uncertainty read and written once per block,
//    the least the algorithm can move) against the measured copy bandwidth.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "Percentile.h"
#include "RlsDeviceProbes.h"
#include "common/GpuDevice.h"
#include "dsp/Pbfdkf.h"
#include "kalman/GpuBatchedPbfdkf.h"

namespace {

using Clock = std::chrono::steady_clock;

using quell::bench::percentile;

// A pool of distinct streams' signals (a far end of coloured noise and its echo through a short decaying
// path), which the batch's streams take in turn: the kernel's work does not depend on the content.
struct Pool {
    static constexpr int kStreams = 16;
    std::vector<float> mic, ref;   // [stream][samples]
    std::size_t samples = 0;
};

Pool makePool(std::size_t samples)
{
    Pool p;
    p.samples = samples;
    p.mic.resize(Pool::kStreams * samples);
    p.ref.resize(p.mic.size());
    std::mt19937 rng(5u);
    std::normal_distribution<float> g(0.0f, 0.1f);
    for (int s = 0; s < Pool::kStreams; ++s) {
        float y1 = 0.0f;
        std::vector<float> path(256);
        for (std::size_t k = 0; k < path.size(); ++k)
            path[k] = g(rng) * std::exp(-static_cast<float>(k) / 40.0f);
        float* x = &p.ref[static_cast<std::size_t>(s) * samples];
        float* d = &p.mic[static_cast<std::size_t>(s) * samples];
        for (std::size_t n = 0; n < samples; ++n)
            x[n] = y1 = 0.9f * y1 + g(rng);
        for (std::size_t n = 0; n < samples; ++n) {
            float acc = 1e-4f * g(rng);
            for (std::size_t k = 0; k < path.size() && k <= n; ++k)
                acc += path[k] * x[n - k];
            d[n] = acc;
        }
    }
    return p;
}

struct Row {
    double kernelMedian = 0, kernelP999 = 0, wallMedian = 0, wallP999 = 0;
};

Row runRow(quell::gpu::GpuBatchedPbfdkf& f, const Pool& pool, int blocks)
{
    const std::size_t S = static_cast<std::size_t>(f.streams()), B = static_cast<std::size_t>(f.blockSize());
    float* mic = f.blockMic();
    float* ref = f.blockRef();
    std::vector<double> kernel, wall;
    const int warmUp = 5;
    for (int b = 0; b < warmUp + blocks; ++b) {
        const std::size_t at = (static_cast<std::size_t>(b) * B) % (pool.samples - B + 1);
        for (std::size_t s = 0; s < S; ++s) {
            const std::size_t from = (s % Pool::kStreams) * pool.samples + at;
            std::copy_n(&pool.mic[from], B, mic + s * B);
            std::copy_n(&pool.ref[from], B, ref + s * B);
        }
        const auto t0 = Clock::now();
        f.processBlock();
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (b >= warmUp) {
            wall.push_back(ms);
            kernel.push_back(f.lastKernelMilliseconds());
        }
    }
    return {percentile(kernel, 0.5), percentile(kernel, 0.999), percentile(wall, 0.5), percentile(wall, 0.999)};
}

} // namespace

QUELL_BENCH_COMMAND(kalman, "GPU batched Kalman filter: concurrent 16 kHz streams in real time, beside the CPU twin on one core")
{
    const quell::gpu::DeviceInfo dev = quell::gpu::queryDevice();
    if (!dev.available) {
        std::fprintf(stderr, "quell-bench kalman: %s\n", dev.description.c_str());
        return 1;
    }
    quell::bench::BenchReport report("kalman");
    report.setInfo("device", dev.description);
    const double copyGBps = quell::gpu::measureCopyBandwidthGBps(256u << 20, 5);
    report.setInfo("copy bandwidth GB/s (D2D, read+write)", copyGBps);
    std::printf("device: %s\ncopy bandwidth %.0f GB/s\n", dev.description.c_str(), copyGBps);
    std::fflush(stdout);

    const int blocks = args.quick ? 60 : 400;
    const Pool pool = makePool(16000 * 4);
    const std::vector<int> tapList = args.quick ? std::vector<int>{4096} : std::vector<int>{1024, 2048, 4096};
    const std::vector<int> streamList = args.quick ? std::vector<int>{1, 1024, 20000}
                                                   : std::vector<int>{1, 256, 1024, 4096, 8192, 16384, 20000, 32768};
    for (const int taps : tapList) {
        quell::dsp::PbfdkfSettings settings;
        settings.taps = taps;
        // The CPU twin on one core of this host: real-time factor of one stream, 2 s of the pool's audio.
        double cpuStreamsPerCore = 0.0;
        {
            quell::dsp::Pbfdkf cpu;
            cpu.prepare(settings);
            const std::size_t n = 32000;
            std::vector<float> e(n);
            const auto t0 = Clock::now();
            cpu.process({pool.mic.data(), n}, {pool.ref.data(), n}, e);
            cpuStreamsPerCore = (static_cast<double>(n) / 16000.0) / std::chrono::duration<double>(Clock::now() - t0).count();
        }
        for (const int streams : streamList) {
            quell::gpu::GpuBatchedPbfdkf gpu;
            gpu.prepare(settings, streams, 1);
            const Row r = runRow(gpu, pool, blocks);
            const double period = 1000.0 * gpu.blockSize() / 16000.0;
            const double capacity = static_cast<double>(streams) * period / r.kernelMedian;
            const double stateGBps = static_cast<double>(streams) * 2.0 * static_cast<double>(gpu.stateBytesPerStream()) / (r.kernelMedian * 1e6);
            const bool realTime = r.wallP999 < period;
            report.add("batched Kalman filter, 16 kHz streams",
                       {{"taps", static_cast<long long>(taps)},
                        {"block B", static_cast<long long>(gpu.blockSize())},
                        {"streams", static_cast<long long>(streams)},
                        {"period ms", period},
                        {"kernel ms median", r.kernelMedian},
                        {"kernel ms p99.9", r.kernelP999},
                        {"call ms median", r.wallMedian},
                        {"call ms p99.9", r.wallP999},
                        {"call p99.9 / period", r.wallP999 / period},
                        {"real time (call p99.9 < period)", std::string(realTime ? "yes" : "no")},
                        {"capacity (streams at the kernel's median)", capacity},
                        {"state GB/s", stateGBps},
                        {"fraction of copy bandwidth", stateGBps / copyGBps},
                        {"state MB per stream", static_cast<double>(gpu.stateBytesPerStream()) / 1e6},
                        {"CPU twin streams per core", cpuStreamsPerCore}});
            std::printf("N=%d B=%d S=%d: kernel %.3f ms (p99.9 %.3f), call %.3f ms (p99.9 %.3f) of %.1f ms; capacity %.0f streams; "
                        "state %.0f GB/s (%.0f%% of copy); CPU twin %.1f streams/core\n",
                        taps, gpu.blockSize(), streams, r.kernelMedian, r.kernelP999, r.wallMedian, r.wallP999, period, capacity,
                        stateGBps, 100.0 * stateGBps / copyGBps, cpuStreamsPerCore);
            std::fflush(stdout);
        }
    }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
