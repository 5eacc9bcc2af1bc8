// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench blockrls: the block-exact GPU RLS (k samples per pass over P) beside the per-sample
// kernel, single channel, N = 256 ... 8192 and k = 16 ... 256, all measured in this run:
//  - samples/s from the kernels' device time (events around each call), and end-to-end (wall clock,
//    staging and copies included);
//  - achieved FP32 rate against the device's peak: 4 N^2 flops per sample (V = P U and the rank-k update
//    of P, 2 N^2 k each per block), the Gram products and the recurrence not counted;
//  - achieved bandwidth on P: 3 x 4 N^2 bytes per block (the update reads and writes P, V reads it),
//    against the measured copy bandwidth.
// Then batches (S streams of the same N and k in every launch) beside the per-sample kernel's batch in the
// same run: channel-samples/s over calls of 4096 samples per stream, and the wall time of 10 ms calls
// (160 samples per stream at 16 kHz, copies and host work included) against the 10 ms period, p50 and
// p99.9 over 400 calls: how many streams one GPU carries in real time with the filter alone.
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

// Channel-samples/s of a batch over calls of `call` samples per stream (kernel time), after a warm-up.
template <typename Batch>
double measureBatch(Batch& b, int streams, std::size_t call)
{
    std::vector<float> x, d;
    makeSignals(call, x, d);
    const std::size_t S = static_cast<std::size_t>(streams);
    std::vector<float> mic(S * call), ref(S * call), out(S * call);
    for (std::size_t i = 0; i < S; ++i) {
        std::copy(d.begin(), d.end(), mic.begin() + static_cast<std::ptrdiff_t>(i * call));
        std::copy(x.begin(), x.end(), ref.begin() + static_cast<std::ptrdiff_t>(i * call));
    }
    b.processBatch(mic.data(), ref.data(), out.data(), call);
    double ms = 0.0;
    for (int rep = 0; rep < 3; ++rep) {
        b.processBatch(mic.data(), ref.data(), out.data(), call);
        ms += b.lastKernelMilliseconds();
    }
    return 3.0 * static_cast<double>(S * call) / (1e-3 * ms);
}

struct CallTimes {
    double p50 = 0.0, p999 = 0.0, max = 0.0; // microseconds
};

// Wall time of `calls` calls of `call` samples per stream (staging, copies and synchronisation included).
CallTimes measureCalls(quell::gpu::GpuBlockRls& b, int streams, std::size_t call, int calls)
{
    std::vector<float> x, d;
    makeSignals(call * static_cast<std::size_t>(calls), x, d);
    const std::size_t S = static_cast<std::size_t>(streams);
    std::vector<float> mic(S * call), ref(S * call), out(S * call);
    std::vector<double> us;
    for (int c = -20; c < calls; ++c) { // 20 calls of warm-up
        const std::size_t at = static_cast<std::size_t>(std::max(c, 0)) * call;
        for (std::size_t i = 0; i < S; ++i) {
            std::copy_n(d.begin() + static_cast<std::ptrdiff_t>(at), call, mic.begin() + static_cast<std::ptrdiff_t>(i * call));
            std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(at), call, ref.begin() + static_cast<std::ptrdiff_t>(i * call));
        }
        const auto t0 = Clock::now();
        b.processBatch(mic.data(), ref.data(), out.data(), call);
        if (c >= 0)
            us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    return {quell::bench::percentile(us, 0.5), quell::bench::percentile(us, 0.999), quell::bench::percentile(us, 1.0)};
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

    // Batches: S streams in every launch.
    std::vector<int> streamList = args.quick ? std::vector<int>{16} : std::vector<int>{16, 64, 256};
    if (!args.streams.empty())
        streamList = args.streams;
    streamList.erase(std::remove(streamList.begin(), streamList.end(), 0), streamList.end());
    const std::vector<int> batchTaps = args.taps.empty() ? std::vector<int>{512, 2048} : args.taps;
    const std::vector<int> batchBlocks = args.steps.empty() ? std::vector<int>{32} : args.steps;
    constexpr std::size_t kCall = 4096, kRealtimeCall = 160; // 160: 10 ms at 16 kHz
    for (const int taps : batchTaps)
        for (const int streams : streamList) {
            quell::dsp::RlsSettings s;
            s.tapsPerChannel = taps;
            double perSample = 0.0;
            try {
                quell::gpu::GpuRls batch;
                batch.prepare(s, streams, kCall);
                perSample = measureBatch(batch, streams, kCall);
            } catch (const std::exception& e) {
                std::printf("  N=%d S=%d per-sample batch skipped: %s\n", taps, streams, e.what());
            }
            for (const int k : batchBlocks) {
                if (const std::string why = quell::gpu::GpuBlockRls::whyNot(s, k, kCall, streams); !why.empty()) {
                    std::printf("  N=%d k=%d S=%d skipped: %s\n", taps, k, streams, why.c_str());
                    continue;
                }
                quell::gpu::GpuBlockRls block;
                block.prepare(s, k, kCall, streams);
                const double rate = measureBatch(block, streams, kCall);
                quell::gpu::GpuBlockRls live;
                live.prepare(s, k, kRealtimeCall, streams);
                const CallTimes t = measureCalls(live, streams, kRealtimeCall, args.quick ? 100 : 400);
                const double period = 1e6 * static_cast<double>(kRealtimeCall) / 16000.0;
                report.add("block RLS, batched",
                           {{"N", static_cast<long long>(taps)},
                            {"k", static_cast<long long>(k)},
                            {"streams", static_cast<long long>(streams)},
                            {"channel-samples/s (kernel)", rate},
                            {"per-sample batch channel-samples/s", perSample},
                            {"speed-up", perSample > 0.0 ? rate / perSample : 0.0},
                            {"streams in real time at 16 kHz (kernel)", rate / 16000.0},
                            {"10 ms call p50 us", t.p50},
                            {"10 ms call p99.9 us", t.p999},
                            {"10 ms call max us", t.max},
                            {"p99.9 / period", t.p999 / period}});
                std::printf("N=%d k=%d S=%d: %.3g channel-samples/s (per-sample batch %.3g), 10 ms calls p50 %.0f us p99.9 %.0f us "
                            "max %.0f us (%.0f%% of the period)\n",
                            taps, k, streams, rate, perSample, t.p50, t.p999, t.max, 100.0 * t.p999 / period);
                std::fflush(stdout);
            }
        }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
