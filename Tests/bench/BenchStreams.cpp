// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench streams: how many concurrent 16 kHz calls one machine carries in real time, each call a
// canceller of its own as the element and quell-live run it today (issue 18): S real-time engines (10 ms
// blocks, no safety block), every one with its worker thread and, on the GPU, its own CUDA stream and
// filter; one simulated sound card wakes at absolute 10 ms deadlines and hands each engine its block.
// Rows grow S until blocks come late; each reports the late blocks of all the streams and the p99.9 of
// the streams' per-block processing against the period. GPU rows (the block RLS) and CPU rows (the
// canceller's CPU choice at that length) on the same machine. This is the baseline a multi-stream
// engine (one batch per block for every stream) has to beat.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "StreamsBenchSetup.h"
#include "engine/RealtimeEngine.h"

namespace {

using namespace quell;

constexpr int kRate = 16000, kBlock = 160;   // 10 ms at 16 kHz

struct StreamsRun {
    std::uint64_t blocks = 0, late = 0;
    double medianUs = 0.0, p999Us = 0.0, maxUs = 0.0;   // the worst stream's
    std::string mode;
};

StreamsRun runStreams(int streams, aec::Backend backend, int taps, double seconds, const std::vector<float>& mic,
                      const std::vector<float>& ref)
{
    std::vector<std::unique_ptr<engine::RealtimeEngine>> engines;
    for (int i = 0; i < streams; ++i) {
        engine::EngineSpec spec;
        spec.hostRate = kRate;
        spec.maxHostBlock = kBlock;
        spec.safetyBlocks = 0;
        // Many workers on a few cores: each sleeps between looks instead of spinning near its deadline.
        spec.workerWait = engine::EngineSpec::WorkerWait::Poll;
        spec.aec.backend = backend;
        spec.aec.taps = taps;
        spec.aec.cpuRealtimeBudget = 0.5;
        auto e = std::make_unique<engine::RealtimeEngine>();
        e->prepare(spec);
        engines.push_back(std::move(e));
    }
    const std::size_t total = static_cast<std::size_t>(seconds * kRate);
    std::vector<float> out(kBlock);
    const long long periodNs = 1'000'000'000LL * kBlock / kRate;
    std::thread card([&] {
        timespec next{};
        clock_gettime(CLOCK_MONOTONIC, &next);
        for (std::size_t pos = 0; pos + kBlock <= total; pos += kBlock) {
            next.tv_nsec += periodNs;
            while (next.tv_nsec >= 1'000'000'000L) {
                next.tv_nsec -= 1'000'000'000L;
                ++next.tv_sec;
            }
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
            for (std::size_t i = 0; i < engines.size(); ++i) {
                // Each stream its own stretch of the scene.
                const std::size_t at = (pos + i * 7919) % (mic.size() - kBlock);
                const float* m[1] = {mic.data() + at};
                float* o[1] = {out.data()};
                engines[i]->process(m, ref.data() + at, o, kBlock);
            }
        }
    });
    card.join();
    StreamsRun r;
    for (const auto& e : engines) {
        const engine::EngineStats s = e->stats();
        r.blocks += s.callbacks;
        r.late += s.lateBlocks;
        r.medianUs = std::max(r.medianUs, s.processing.medianUs);
        r.p999Us = std::max(r.p999Us, s.processing.p999Us);
        r.maxUs = std::max(r.maxUs, s.processing.maxUs);
        r.mode = s.mode;
    }
    return r;
}

} // namespace

QUELL_BENCH_COMMAND(streams, "concurrent 16 kHz streams, an engine each (10 ms blocks): late blocks and p99.9 against the period, GPU and CPU")
{
    const double seconds = args.seconds > 0.0 ? args.seconds : args.quick ? 2.0 : 10.0;
    const std::vector<int> tapList = args.taps.empty() ? std::vector<int>{512, 1024, 2048} : args.taps;
    const std::vector<int> streamList = args.streams.empty() ? std::vector<int>{1, 8, 16, 32, 64, 128} : args.streams;
    bench::BenchReport report("streams");
    const std::vector<aec::Backend> backends = bench::streamsBackends(report, seconds);
    const bench::StreamsScene scene = bench::streamsScene(kRate);
    const std::vector<float>& mic = scene.mic;
    const std::vector<float>& ref = scene.ref;
    const double periodUs = 1e6 * kBlock / kRate;
    for (const aec::Backend backend : backends)
        for (const int taps : tapList)
            for (const int streams : streamList) {
                StreamsRun r;
                try {
                    r = runStreams(streams, backend, taps, seconds, mic, ref);
                } catch (const std::exception& e) {
                    std::printf("  %s %d taps x %d streams: not run (%s)\n", aec::toString(backend), taps, streams, e.what());
                    break;
                }
                const double lateFraction = r.blocks > 0 ? static_cast<double>(r.late) / static_cast<double>(r.blocks) : 0.0;
                report.add("concurrent streams, 16 kHz, 10 ms blocks, an engine each",
                           {{"backend", std::string(aec::toString(backend))},
                            {"taps", static_cast<long long>(taps)},
                            {"streams", static_cast<long long>(streams)},
                            {"blocks", static_cast<long long>(r.blocks)},
                            {"late blocks", static_cast<long long>(r.late)},
                            {"worst stream's median us", r.medianUs},
                            {"worst stream's p99.9 us", r.p999Us},
                            {"p99.9/period", r.p999Us / periodUs},
                            {"worst max us", r.maxUs},
                            {"canceller", r.mode}});
                std::printf("%s %d taps x %d streams: %llu late of %llu, p99.9 %.0f us (%.0f %% of the period)\n", aec::toString(backend), taps,
                            streams, static_cast<unsigned long long>(r.late), static_cast<unsigned long long>(r.blocks), r.p999Us,
                            100.0 * r.p999Us / periodUs);
                std::fflush(stdout);
                // Past real time: more streams only take longer.
                if (lateFraction > 0.01 || r.p999Us > periodUs)
                    break;
            }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
