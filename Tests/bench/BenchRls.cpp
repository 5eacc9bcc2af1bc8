// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench rls: the GPU RLS against its physical floors and its CPU twin, all measured in this run.
//  - device-to-device copy bandwidth (read + write bytes) and the grid-barrier floor of each grid used;
//  - single channel, N = 256 ... 4096: a sweep of kernel layouts, the best one's samples/s, real-time
//    factors at 16 and 48 kHz, time per sample against the barrier floor;
//  - the float32 CPU twin (one thread and threaded) at the same N, and the GPU/CPU ratios;
//  - batched channels (N = 256, 512; B = 16 ... 256): channel-samples/s and the fraction of the
//    bandwidth bound, defined as 2 * 4 * N^2 bytes of P (read + write) per channel-sample at the
//    measured copy bandwidth.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "common/GpuDevice.h"
#include "dsp/Rls.h"
#include "rls/GpuRls.h"
#include "RlsDeviceProbes.h"

namespace {

using quell::dsp::RlsSettings;
using quell::gpu::GpuRls;
using quell::gpu::RlsLaunchPolicy;
using Clock = std::chrono::steady_clock;

// Far end: white noise; microphone: a short echo of it plus noise. The cost does not depend on the data.
void makeSignals(std::size_t n, std::uint32_t seed, std::vector<float>& x, std::vector<float>& d)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.0f, 0.1f);
    x.resize(n);
    d.resize(n);
    for (auto& v : x) v = g(rng);
    for (std::size_t i = 0; i < n; ++i)
        d[i] = (i >= 3 ? 0.5f * x[i - 3] : 0.0f) + 1e-3f * g(rng);
}

struct GpuRun {
    double kernelSamplesPerSecond = 0.0;
    double wallSamplesPerSecond = 0.0;
    RlsLaunchPolicy policy{};
    int blocks = 0;
    std::string variant;
};

GpuRun runSingle(int taps, const RlsLaunchPolicy& request, std::size_t samples)
{
    RlsSettings s;
    s.tapsPerChannel = taps;
    GpuRls gpu;
    gpu.prepare(s, 1, 4096, request);
    std::vector<float> x, d, e(samples);
    makeSignals(samples + 2048, 7u, x, d);
    gpu.process(d.data(), x.data(), e.data(), 2048); // warm-up (and adaptation under way)
    const auto t0 = Clock::now();
    gpu.process(d.data() + 2048, x.data() + 2048, e.data(), samples);
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    GpuRun r;
    r.kernelSamplesPerSecond = static_cast<double>(samples) / (1e-3 * gpu.lastKernelMilliseconds());
    r.wallSamplesPerSecond = static_cast<double>(samples) / wall;
    r.policy = gpu.policy();
    r.blocks = gpu.blocksPerChannel();
    r.variant = gpu.variant();
    return r;
}

double runCpu(int taps, int threads, std::size_t samples)
{
    RlsSettings s;
    s.tapsPerChannel = taps;
    quell::dsp::Rls<float> cpu;
    cpu.prepare(s);
    cpu.setWorkerThreads(threads);
    std::vector<float> x, d, e(samples + 16);
    makeSignals(samples + 16, 9u, x, d);
    cpu.process(std::span<const float>(d).first(16), std::span<const float>(x).first(16), std::span<float>(e).first(16));
    const auto t0 = Clock::now();
    cpu.process(std::span<const float>(d).subspan(16), std::span<const float>(x).subspan(16),
                std::span<float>(e).subspan(16));
    return static_cast<double>(samples) / std::chrono::duration<double>(Clock::now() - t0).count();
}

RlsLaunchPolicy layout(int threads, int chunks, int rows, int rg, int sg)
{
    RlsLaunchPolicy p;
    p.threads = threads;
    p.columnChunks = chunks;
    p.rowsPerBlock = rows;
    p.registerGroups = rg;
    p.sharedGroups = sg;
    return p;
}

// The library's grid layout for N (the default where no cluster is chosen).
RlsLaunchPolicy gridDefault()
{
    RlsLaunchPolicy p;
    p.cluster = 0;
    return p;
}

// Layouts tried per N: the grid default, others, the cluster ones (-1 / 0 fields are chosen by the
// library; the library's default is one of them).
std::vector<RlsLaunchPolicy> candidates(int taps)
{
    std::vector<RlsLaunchPolicy> c{gridDefault()};
    switch (taps) {
    case 256:
        for (int rows : {32, 16, 4}) c.push_back(layout(0, 0, rows, -1, -1));
        break;
    case 512:
        for (int rows : {16, 4}) c.push_back(layout(0, 0, rows, -1, -1));
        break;
    case 1024:
        c.push_back(layout(0, 0, 16, -1, -1));
        break;
    case 2048:
        c.push_back(layout(512, 1, 16, 2, -1));
        c.push_back(layout(512, 1, 32, 4, -1));
        break;
    case 4096:
        c.push_back(layout(512, 2, 32, 1, -1));
        break;
    default:
        break;
    }
    // Every grid layout with both exchanges: an atomic-counter barrier in front (the default), and
    // the tagged words alone.
    const std::size_t layouts = c.size();
    for (std::size_t i = 0; i < layouts; ++i) {
        RlsLaunchPolicy wordsOnly = c[i];
        wordsOnly.counterBarrier = false;
        wordsOnly.cluster = 0;
        c.push_back(wordsOnly);
    }
    // One thread-block cluster per channel (exchange through distributed shared memory): 16 blocks
    // (the default rows for the cluster) and 8 blocks.
    if (taps <= 1024) {
        RlsLaunchPolicy sixteen;
        sixteen.cluster = 1;
        c.push_back(sixteen);
        RlsLaunchPolicy eight = sixteen;
        eight.rowsPerBlock = (taps / 8 + 3) / 4 * 4;
        c.push_back(eight);
    }
    return c;
}

std::string describe(const RlsLaunchPolicy& p, int blocks)
{
    return std::to_string(blocks) + "x" + std::to_string(p.threads) + " thr, " + std::to_string(p.rowsPerBlock)
           + " rows (" + std::to_string(4 * p.registerGroups) + " reg, " + std::to_string(4 * p.sharedGroups)
           + " smem), c4=" + std::to_string(p.columnChunks)
           + (p.cluster == 1 ? ", cluster DSMEM" : p.counterBarrier ? ", +counter barrier" : ", words only");
}

} // namespace

QUELL_BENCH_COMMAND(rls, "GPU RLS: single channel vs barrier floor and CPU twin, batched vs bandwidth")
{
    const quell::gpu::DeviceInfo dev = quell::gpu::queryDevice();
    if (!dev.available) {
        std::fprintf(stderr, "quell-bench rls: %s\n", dev.description.c_str());
        return 1;
    }
    quell::bench::BenchReport report("rls");
    report.setInfo("device", dev.description);
    report.setInfo("cpu threads", static_cast<long long>(std::thread::hardware_concurrency()));
    const double copyGBps = quell::gpu::measureCopyBandwidthGBps(args.quick ? (128u << 20) : (512u << 20), 10);
    report.setInfo("copy bandwidth GB/s (D2D, read+write)", copyGBps);
    report.setInfo("bandwidth bound", std::string("2*4*N^2 bytes of P (read+write) per channel-sample at the copy bandwidth"));
    std::printf("device: %s\ncopy bandwidth: %.0f GB/s\n", dev.description.c_str(), copyGBps);
    std::fflush(stdout);

    const std::vector<int> tapList = args.quick ? std::vector<int>{256, 1024} : std::vector<int>{256, 512, 1024, 2048, 4096};
    for (int taps : tapList) {
        const std::size_t samples = args.quick ? 4096 : (taps >= 4096 ? 8192 : 16384);
        GpuRun best, bestGrid, bestCluster;
        for (const RlsLaunchPolicy& request : candidates(taps)) {
            GpuRun r;
            try {
                r = runSingle(taps, request, samples);
            } catch (const std::exception& e) {
                std::printf("  N=%d layout skipped: %s\n", taps, e.what());
                continue;
            }
            report.add("single-channel layout sweep",
                       {{"N", static_cast<long long>(taps)},
                        {"layout", describe(r.policy, r.blocks)},
                        {"variant", r.variant},
                        {"samples/s (kernel)", r.kernelSamplesPerSecond},
                        {"us/sample", 1e6 / r.kernelSamplesPerSecond}});
            if (r.kernelSamplesPerSecond > best.kernelSamplesPerSecond)
                best = r;
            GpuRun& bestOfKind = r.policy.cluster == 1 ? bestCluster : bestGrid;
            if (r.kernelSamplesPerSecond > bestOfKind.kernelSamplesPerSecond)
                bestOfKind = r;
        }
        if (best.blocks == 0)
            continue;
        if (bestCluster.blocks > 0 && bestGrid.blocks > 0) {
            report.add("cluster vs grid exchange",
                       {{"N", static_cast<long long>(taps)},
                        {"grid layout", describe(bestGrid.policy, bestGrid.blocks)},
                        {"grid samples/s", bestGrid.kernelSamplesPerSecond},
                        {"cluster layout", describe(bestCluster.policy, bestCluster.blocks)},
                        {"cluster samples/s", bestCluster.kernelSamplesPerSecond},
                        {"cluster / grid", bestCluster.kernelSamplesPerSecond / bestGrid.kernelSamplesPerSecond}});
            std::printf("N=%d: cluster %.0f samples/s (%s) vs grid %.0f (%s)\n", taps,
                        bestCluster.kernelSamplesPerSecond, describe(bestCluster.policy, bestCluster.blocks).c_str(),
                        bestGrid.kernelSamplesPerSecond, describe(bestGrid.policy, bestGrid.blocks).c_str());
            std::fflush(stdout);
        }
        // The grid-barrier floor of the best grid layout (a cluster layout has no grid barrier).
        double floorCounter = 0.0, floorCg = 0.0;
        const GpuRun& floorOf = bestGrid.blocks > 0 ? bestGrid : best;
        if (floorOf.blocks > 1) {
            floorCounter = quell::gpu::measureGridBarrierMicroseconds(floorOf.blocks, floorOf.policy.threads, 20000,
                                                                       quell::gpu::GridBarrierKind::GenerationCounter);
            floorCg = quell::gpu::measureGridBarrierMicroseconds(floorOf.blocks, floorOf.policy.threads, 20000,
                                                                  quell::gpu::GridBarrierKind::CooperativeGroups);
        }
        const double cpuSamples = std::clamp(4e8 / (static_cast<double>(taps) * taps) / (args.quick ? 4 : 1), 32.0, 20000.0);
        const double cpu1 = runCpu(taps, 1, static_cast<std::size_t>(cpuSamples));
        const double cpuN = runCpu(taps, 0, static_cast<std::size_t>(cpuSamples * 4));
        const double usPerSample = 1e6 / best.kernelSamplesPerSecond;
        report.add("single channel",
                   {{"N", static_cast<long long>(taps)},
                    {"layout", describe(best.policy, best.blocks)},
                    {"samples/s", best.kernelSamplesPerSecond},
                    {"samples/s end-to-end", best.wallSamplesPerSecond},
                    {"RTF 16k", best.kernelSamplesPerSecond / 16000.0},
                    {"RTF 48k", best.kernelSamplesPerSecond / 48000.0},
                    {"us/sample", usPerSample},
                    {"barrier us (counter)", floorCounter},
                    {"barrier us (cg)", floorCg},
                    {"us/sample / barrier", floorCounter > 0 ? usPerSample / floorCounter : 0.0},
                    {"CPU f32 1 thr samples/s", cpu1},
                    {"CPU f32 threaded samples/s", cpuN},
                    {"GPU / CPU 1 thr", best.kernelSamplesPerSecond / cpu1},
                    {"GPU / CPU threaded", best.kernelSamplesPerSecond / cpuN}});
        std::printf("N=%d: %.0f samples/s (%s), barrier %.2f us, CPU 1 thr %.0f, threaded %.0f\n", taps,
                    best.kernelSamplesPerSecond, describe(best.policy, best.blocks).c_str(), floorCounter, cpu1, cpuN);
        std::fflush(stdout);
    }

    const std::vector<int> batchList = args.quick ? std::vector<int>{16, 128} : std::vector<int>{16, 32, 64, 128, 256};
    for (int taps : {256, 512}) {
        for (int channels : batchList) {
            const std::size_t samples = args.quick ? 256 : 1024;
            RlsSettings s;
            s.tapsPerChannel = taps;
            std::vector<float> x, d;
            makeSignals(samples * channels, 11u, x, d);
            std::vector<float> e(x.size());
            RlsLaunchPolicy streaming;
            streaming.rowsPerBlock = taps;
            RlsLaunchPolicy clustered; // one 16-block cluster per channel, P on chip, clusters in waves
            clustered.cluster = 1;
            for (const RlsLaunchPolicy& request : {gridDefault(), streaming, clustered}) {
                GpuRls gpu;
                try {
                    gpu.prepare(s, channels, samples, request);
                } catch (const std::exception& ex) {
                    std::printf("  batched N=%d B=%d skipped: %s\n", taps, channels, ex.what());
                    continue;
                }
                try {
                    gpu.processBatch(d.data(), x.data(), e.data(), samples); // warm-up
                    gpu.processBatch(d.data(), x.data(), e.data(), samples);
                } catch (const std::exception& ex) {
                    std::printf("  batched N=%d B=%d failed: %s\n", taps, channels, ex.what());
                    continue;
                }
                const double cs = channels * static_cast<double>(samples) / (1e-3 * gpu.lastKernelMilliseconds());
                const double gbps = cs * 8.0 * taps * taps / 1e9;
                report.add("batched",
                           {{"N", static_cast<long long>(taps)},
                            {"B", static_cast<long long>(channels)},
                            {"layout", describe(gpu.policy(), gpu.blocksPerChannel())},
                            {"channel-samples/s", cs},
                            {"P GB/s", gbps},
                            {"fraction of bandwidth bound", gbps / copyGBps}});
            }
        }
    }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
