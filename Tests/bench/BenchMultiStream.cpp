// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench multistream: how many concurrent 16 kHz calls one MultiStreamCanceller carries in real time
// (issue 18): S streams in one object, the streams' adaptive filters as one batch (on the GPU one batched
// block-exact RLS or one batched Kalman filter per block, --filter; on the CPU a filter per stream), their cancellers' other stages on a pool of
// every core. A simulated sound card wakes at absolute 10 ms deadlines and hands every stream its block
// in one process() call. Each row reports the call's time (median, p99.9, max) against the 10 ms period,
// where it went (the streams' cancellers before the filter, the batch's filter, the cancellers after:
// each part's median and its own p99.9), and the blocks whose call outlasted the period. Rows grow S until p99.9 passes the period; the largest
// S with p99.9 under half the period is the row's capacity. Compare with `streams` (an engine each).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "StreamsBenchSetup.h"
#include "Percentile.h"
#include "engine/MultiStreamCanceller.h"

namespace {

using namespace quell;

constexpr int kRate = 16000;

struct Row {
    std::size_t blocks = 0, late = 0;
    double medianUs = 0.0, p999Us = 0.0, maxUs = 0.0;
    double beforeUs = 0.0, filterUs = 0.0, afterUs = 0.0;            // medians
    double beforeP999 = 0.0, filterP999 = 0.0, afterP999 = 0.0;      // p99.9 of each part on its own
    std::string filter, priority;
    int threads = 0;
};

Row runRow(int streams, aec::Backend backend, aec::FilterKind filterKind, int taps, double seconds, const std::vector<float>& mic,
          const std::vector<float>& ref)
{
    engine::MultiStreamSettings settings;
    settings.canceller.backend = backend;
    settings.canceller.filter = filterKind;
    settings.canceller.taps = taps;
    settings.maxStreams = streams;
    engine::MultiStreamCanceller batch;
    batch.prepare(settings);
    const std::size_t n = batch.blockSamples();
    std::vector<engine::MultiStreamCanceller::StreamBlock> blocks(static_cast<std::size_t>(streams));
    std::vector<float> out(static_cast<std::size_t>(streams) * n);
    for (int s = 0; s < streams; ++s)
        blocks[static_cast<std::size_t>(s)].stream = batch.open();
    const std::size_t total = static_cast<std::size_t>(seconds * kRate), calls = total / n;
    std::vector<double> callUs, before, filter, after;
    callUs.reserve(calls);
    before.reserve(calls);
    filter.reserve(calls);
    after.reserve(calls);
    const long long periodNs = 1'000'000'000LL * static_cast<long long>(n) / kRate;
    timespec next{};
    clock_gettime(CLOCK_MONOTONIC, &next);
    Row r;
    for (std::size_t c = 0; c < calls; ++c) {
        next.tv_nsec += periodNs;
        while (next.tv_nsec >= 1'000'000'000L) {
            next.tv_nsec -= 1'000'000'000L;
            ++next.tv_sec;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
        for (int s = 0; s < streams; ++s) {
            // Each stream its own stretch of the scene.
            const std::size_t at = (c * n + static_cast<std::size_t>(s) * 7919) % (mic.size() - n);
            auto& b = blocks[static_cast<std::size_t>(s)];
            b.mic = mic.data() + at;
            b.ref[0] = ref.data() + at;
            b.out = out.data() + static_cast<std::size_t>(s) * n;
        }
        const auto t0 = std::chrono::steady_clock::now();
        batch.process(blocks);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        callUs.push_back(us);
        before.push_back(batch.lastTiming().beforeUs);
        filter.push_back(batch.lastTiming().filterUs);
        after.push_back(batch.lastTiming().afterUs);
        if (us > 1e-3 * static_cast<double>(periodNs))
            ++r.late;
    }
    r.blocks = calls;
    r.medianUs = bench::percentile(callUs, 0.5);
    r.p999Us = bench::percentile(callUs, 0.999);
    r.maxUs = *std::max_element(callUs.begin(), callUs.end());
    r.beforeUs = bench::percentile(before, 0.5);
    r.filterUs = bench::percentile(filter, 0.5);
    r.afterUs = bench::percentile(after, 0.5);
    r.beforeP999 = bench::percentile(before, 0.999);
    r.filterP999 = bench::percentile(filter, 0.999);
    r.afterP999 = bench::percentile(after, 0.999);
    r.filter = batch.description();
    r.threads = batch.threads();
    r.priority = batch.threadPriority();
    return r;
}

} // namespace

QUELL_BENCH_COMMAND(multistream, "concurrent 16 kHz streams in one MultiStreamCanceller (one filter batch a block): call time against the 10 ms period, GPU and CPU")
{
    const double seconds = args.seconds > 0.0 ? args.seconds : args.quick ? 2.0 : 10.0;
    const std::vector<int> tapList = args.taps.empty() ? std::vector<int>{512, 1024, 2048} : args.taps;
    const std::vector<int> streamList = args.streams.empty() ? std::vector<int>{16, 64, 128, 256, 512, 1024, 2048} : args.streams;
    bench::BenchReport report("multistream");
    // The block loop (this thread) takes items beside the pool's threads: the same priority as theirs.
    report.setInfo("block loop", engine::describe(engine::raiseCurrentThreadPriority(60)));
    std::vector<aec::Backend> backends = bench::streamsBackends(report, seconds);
    if (!args.only.empty()) {
        if (args.only != "gpu" && args.only != "cpu")
            throw std::invalid_argument("multistream: --only takes gpu or cpu (got '" + args.only + "')");
        const aec::Backend only = args.only == "gpu" ? aec::Backend::Gpu : aec::Backend::Cpu;
        std::erase_if(backends, [only](aec::Backend b) { return b != only; });
    }
    std::vector<aec::FilterKind> filters;
    for (const std::string& f : args.filters.empty() ? std::vector<std::string>{"rls", "kalman"} : args.filters)
        filters.push_back(aec::parseFilterKind("--filter", f));
    const bench::StreamsScene scene = bench::streamsScene(kRate);
    const std::vector<float>& mic = scene.mic;
    const std::vector<float>& ref = scene.ref;
    const double periodUs = 1e4;
    struct RowKind {
        aec::Backend backend;
        aec::FilterKind filterKind;
        int taps;
    };
    std::vector<RowKind> kinds;
    for (const aec::Backend backend : backends)
        for (const aec::FilterKind filterKind : filters)
            for (const int taps : tapList)
                kinds.push_back({backend, filterKind, taps});
    for (const auto& [backend, filterKind, taps] : kinds) {
            const std::string name = std::string(aec::toString(backend)) + " " + aec::toString(filterKind);
            int capacity = 0;
            for (const int streams : streamList) {
                Row r;
                try {
                    r = runRow(streams, backend, filterKind, taps, seconds, mic, ref);
                } catch (const std::exception& e) {
                    std::printf("  %s %d taps x %d streams: not run (%s)\n", name.c_str(), taps, streams, e.what());
                    break;
                }
                if (r.p999Us < 0.5 * periodUs)
                    capacity = streams;
                report.add("concurrent streams, 16 kHz, 10 ms blocks, one MultiStreamCanceller",
                           {{"backend", std::string(aec::toString(backend))},
                            {"filter kind", std::string(aec::toString(filterKind))},
                            {"taps", static_cast<long long>(taps)},
                            {"streams", static_cast<long long>(streams)},
                            {"threads", static_cast<long long>(r.threads)},
                            {"blocks", static_cast<long long>(r.blocks)},
                            {"calls over the period", static_cast<long long>(r.late)},
                            {"median us", r.medianUs},
                            {"p99.9 us", r.p999Us},
                            {"p99.9/period", r.p999Us / periodUs},
                            {"max us", r.maxUs},
                            {"median before-filter us", r.beforeUs},
                            {"median filter us", r.filterUs},
                            {"median after-filter us", r.afterUs},
                            {"p99.9 before-filter us", r.beforeP999},
                            {"p99.9 filter us", r.filterP999},
                            {"p99.9 after-filter us", r.afterP999},
                            {"filter", r.filter},
                            {"pool threads", r.priority}});
                std::printf("%s %d taps x %d streams: median %.0f us (before %.0f, filter %.0f, after %.0f), p99.9 %.0f us (%.0f %% of the "
                            "period; the parts' own p99.9 %.0f, %.0f, %.0f), max %.0f, %zu of %zu calls over the period\n",
                            name.c_str(), taps, streams, r.medianUs, r.beforeUs, r.filterUs, r.afterUs, r.p999Us,
                            100.0 * r.p999Us / periodUs, r.beforeP999, r.filterP999, r.afterP999, r.maxUs, r.late, r.blocks);
                std::fflush(stdout);
                if (r.p999Us > periodUs)
                    break;
            }
            report.add("capacity: most streams with the call's p99.9 under half the period",
                       {{"backend", std::string(aec::toString(backend))},
                        {"filter kind", std::string(aec::toString(filterKind))},
                        {"taps", static_cast<long long>(taps)},
                        {"streams", static_cast<long long>(capacity)}});
            std::printf("%s %d taps: capacity %d streams (p99.9 under 50 %% of the period)\n", name.c_str(), taps, capacity);
        }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
