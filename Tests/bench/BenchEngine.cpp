// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench engine: the real-time engine under a simulated audio device. A thread wakes at absolute
// block deadlines (like a sound card's interrupt), calls the engine's audio callback with the next
// block of a far-end/echo scene, and the engine's worker runs the default pipeline (GPU when present).
// The "block timeline" table says where late blocks' time went (BlockTimeline.h); "worker wait" compares
// how the idle worker waits (EngineSpec::WorkerWait).
// Reports the per-block processing-time distribution against the block period, and deadline misses.
#include <time.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "common/GpuDevice.h"
#include "engine/RealtimeEngine.h"
#include "engine/ThreadPriority.h"
#include "support/Signals.h"

namespace {

using namespace quell;

struct EngineRun {
    engine::EngineStats stats;
    double periodUs = 0.0;
    bool audioRealtime = false;
};

EngineRun runRealtime(int rate, int block, double seconds, const std::vector<float>& mic, const std::vector<float>& ref,
                      const aec::EchoCancellerSettings& settings = {},
                      engine::EngineSpec::WorkerWait wait = engine::EngineSpec::WorkerWait::Poll)
{
    engine::EngineSpec spec;
    spec.workerWait = wait;
    spec.hostRate = rate;
    spec.maxHostBlock = block;
    spec.aec = settings;
    spec.aec.backend = aec::Backend::Auto; // the default pipeline: GPU RLS, 1024 taps at 16 kHz
    spec.aec.cpuRealtimeBudget = 0.5;
    engine::RealtimeEngine eng;
    eng.prepare(spec);
    const std::size_t total = static_cast<std::size_t>(seconds * rate);
    std::vector<float> out(static_cast<std::size_t>(block));
    const long long periodNs = 1'000'000'000LL * block / rate;
    bool audioRealtime = false;
    std::thread audio([&] {
        // A sound card's callback thread runs at real-time priority (JACK, PipeWire, ALSA's): so does
        // this one where the system allows, above the worker's.
        audioRealtime = engine::promoteCurrentThreadToRealtime(80);
        timespec next{};
        clock_gettime(CLOCK_MONOTONIC, &next);
        for (std::size_t pos = 0; pos + static_cast<std::size_t>(block) <= total; pos += static_cast<std::size_t>(block)) {
            next.tv_nsec += periodNs;
            while (next.tv_nsec >= 1'000'000'000L) {
                next.tv_nsec -= 1'000'000'000L;
                ++next.tv_sec;
            }
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
            const std::size_t at = pos % (mic.size() - static_cast<std::size_t>(block));
            const float* m[1] = {mic.data() + at};
            float* o[1] = {out.data()};
            eng.process(m, ref.data() + at, o, block);
        }
    });
    audio.join();
    return {eng.stats(), static_cast<double>(periodNs) * 1e-3, audioRealtime};
}

} // namespace

QUELL_BENCH_COMMAND(engine, "real-time engine: per-block processing time vs block period, deadline misses (48 kHz)")
{
    const double seconds = args.quick ? 5.0 : 60.0;
    const int rate = 48000;
    bench::BenchReport report("engine");
    const gpu::DeviceInfo dev = gpu::queryDevice();
    report.setInfo("device", dev.available ? dev.description : ("none: " + dev.description));
    report.setInfo("seconds per run", seconds);
    // Scene: coloured far end (speech-like) and its echo through a decaying room, 20 s, looped.
    const auto x = test::colouredNoise(static_cast<std::size_t>(rate) * 20, 1, 0.1);
    const auto h = test::randomSystem(2400, 2, 600.0);
    const auto d = test::convolve(x, h);
    const std::vector<float> ref = test::cast<float>(x), mic = test::cast<float>(d);
    for (const int block : {128, 256}) {
        const EngineRun r = runRealtime(rate, block, seconds, mic, ref);
        const auto& p = r.stats.processing;
        report.add("per-block processing, 48 kHz host, default canceller",
                   {{"block", static_cast<long long>(block)},
                    {"period us", r.periodUs},
                    {"blocks", static_cast<long long>(r.stats.callbacks)},
                    {"median us", p.medianUs},
                    {"p99 us", p.p99Us},
                    {"p99.9 us", p.p999Us},
                    {"max us", p.maxUs},
                    {"p99.9/period", p.p999Us / r.periodUs},
                    {"late blocks", static_cast<long long>(r.stats.lateBlocks)},
                    {"latency ms", r.stats.latencyMs},
                    {"canceller", r.stats.mode}});
        // Where the time goes (BlockTimeline): late blocks as the worker saw them, by the interval that
        // made each late.
        const engine::BlockTimelineSummary& t = r.stats.timeline;
        report.add("block timeline, 48 kHz host, default canceller",
                   {{"block", static_cast<long long>(block)},
                    {"callback interval max us", t.callbackInterval.maxUs},
                    {"wait p99.9 us", t.waitBeforePickup.p999Us},
                    {"wait max us", t.waitBeforePickup.maxUs},
                    {"hand-back p99.9 us", t.handBack.p999Us},
                    {"turnaround p99.9 us", t.turnaround.p999Us},
                    {"turnaround max us", t.turnaround.maxUs},
                    {"late (worker)", static_cast<long long>(t.lateBlocks)},
                    {"by wait", static_cast<long long>(t.lateByWait)},
                    {"by processing", static_cast<long long>(t.lateByProcessing)},
                    {"by hand-back", static_cast<long long>(t.lateByHandBack)},
                    {"by early callback", static_cast<long long>(t.lateByEarlyCallback)}});
    }
    // The idle worker's wait: polling (the default) against spinning, 128-sample blocks.
    using Wait = engine::EngineSpec::WorkerWait;
    for (const auto wait : {Wait::Poll, Wait::Spin, Wait::Anticipate}) {
        const EngineRun r = runRealtime(rate, 128, seconds / 2.0, mic, ref, {}, wait);
        const engine::BlockTimelineSummary& t = r.stats.timeline;
        report.add("worker wait, 128-sample blocks at 48 kHz",
                   {{"wait", std::string(wait == Wait::Spin ? "spin" : wait == Wait::Poll ? "poll 100 us" : "anticipate")},
                    {"real-time threads", std::string(r.audioRealtime ? "card" : "") + (r.stats.workerRealtime ? " worker" : "")},
                    {"blocks", static_cast<long long>(r.stats.callbacks)},
                    {"wait p99.9 us", t.waitBeforePickup.p999Us},
                    {"turnaround p99.9 us", t.turnaround.p999Us},
                    {"turnaround max us", t.turnaround.maxUs},
                    {"late blocks", static_cast<long long>(r.stats.lateBlocks)},
                    {"late (worker)", static_cast<long long>(t.lateBlocks)},
                    {"by wait", static_cast<long long>(t.lateByWait)},
                    {"by processing", static_cast<long long>(t.lateByProcessing)},
                    {"by early callback", static_cast<long long>(t.lateByEarlyCallback)}});
    }
    // What the stages after the linear filter cost: the same scene with each of them off (128-sample
    // blocks, a third of the time).
    struct Variant {
        const char* name;
        void (*apply)(aec::EchoCancellerSettings&);
    };
    const Variant variants[] = {
        {"default", [](aec::EchoCancellerSettings&) {}},
        {"no drift compensation", [](aec::EchoCancellerSettings& a) { a.drift.enabled = false; }},
        {"no residual suppressor", [](aec::EchoCancellerSettings& a) { a.suppressor.enabled = false; }},
        {"no path-change restart", [](aec::EchoCancellerSettings& a) { a.restartOnPathChange = false; }},
        {"linear filter only", [](aec::EchoCancellerSettings& a) {
             a.drift.enabled = false;
             a.suppressor.enabled = false;
             a.restartOnPathChange = false;
         }},
    };
    for (const Variant& v : variants) {
        aec::EchoCancellerSettings settings;
        v.apply(settings);
        const EngineRun r = runRealtime(rate, 128, seconds / 3.0, mic, ref, settings);
        const auto& p = r.stats.processing;
        report.add("stage costs, 128-sample blocks at 48 kHz",
                   {{"variant", std::string(v.name)},
                    {"blocks", static_cast<long long>(r.stats.callbacks)},
                    {"median us", p.medianUs},
                    {"p99 us", p.p99Us},
                    {"p99.9 us", p.p999Us},
                    {"max us", p.maxUs},
                    {"late blocks", static_cast<long long>(r.stats.lateBlocks)},
                    {"latency ms", r.stats.latencyMs}});
    }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
