// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench engine: the real-time engine under a simulated audio device. A thread wakes at absolute
// block deadlines (like a sound card's interrupt), calls the engine's audio callback with the next
// block of a far-end/echo scene, and the engine's worker runs the default pipeline (GPU when present).
// The "block timeline" table says where late blocks' time went (BlockTimeline.h); "worker wait" compares
// how the idle worker waits (EngineSpec::WorkerWait); "stress" runs the same rows with every CPU core
// busy (threads this program starts) and with a second process keeping the GPU busy (quell-bench
// gpuload, started and stopped here), as users' machines are.
// Reports the per-block processing-time distribution against the block period, and deadline misses.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>
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
    engine::ThreadPriority card;   // the simulated sound card's thread
};

// Which of the two threads got which priority: "card nice -20, worker nice -20".
std::string priorities(const EngineRun& r)
{
    return "card " + engine::describe(r.card) + ", worker " + engine::describe(r.stats.workerPriority);
}

EngineRun runRealtime(int rate, int block, double seconds, const std::vector<float>& mic, const std::vector<float>& ref,
                      const aec::EchoCancellerSettings& settings = {},
                      engine::EngineSpec::WorkerWait wait = engine::EngineSpec{}.workerWait, int safetyBlocks = 0)
{
    engine::EngineSpec spec;
    spec.workerWait = wait;
    spec.hostRate = rate;
    spec.maxHostBlock = block;
    spec.safetyBlocks = safetyBlocks;
    spec.aec = settings;
    spec.aec.backend = aec::Backend::Auto; // the default pipeline: GPU RLS, 1024 taps at 16 kHz
    spec.aec.cpuRealtimeBudget = 0.5;
    engine::RealtimeEngine eng;
    eng.prepare(spec);
    const std::size_t total = static_cast<std::size_t>(seconds * rate);
    std::vector<float> out(static_cast<std::size_t>(block));
    const long long periodNs = 1'000'000'000LL * block / rate;
    engine::ThreadPriority card;
    std::thread audio([&] {
        // A sound card's callback thread runs at real-time priority (JACK, PipeWire, ALSA's): so does
        // this one where the system allows, above the worker's; else at the highest nice allowed.
        card = engine::raiseCurrentThreadPriority(80);
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
    return {eng.stats(), static_cast<double>(periodNs) * 1e-3, card};
}

// Every core busy with arithmetic, at normal priority, while it lives.
class CpuLoad {
public:
    CpuLoad()
    {
        const unsigned n = std::max(1u, std::thread::hardware_concurrency());
        for (unsigned i = 0; i < n; ++i)
            threads_.emplace_back([this, i] {
                volatile double x = 1.0 + i;
                while (!stop_.load(std::memory_order_relaxed))
                    for (int k = 0; k < 10000; ++k)
                        x = x * 1.0000001 + 1e-9;
            });
    }
    ~CpuLoad()
    {
        stop_.store(true);
        for (std::thread& t : threads_)
            t.join();
    }
    unsigned threads() const { return static_cast<unsigned>(threads_.size()); }

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

// This program's gpuload command in a second process (its own CUDA context, as another application's
// would be), for at most `seconds`; stopped with SIGTERM when this goes.
class GpuLoadProcess {
public:
    explicit GpuLoadProcess(double seconds)
    {
        const std::string limit = std::to_string(static_cast<int>(std::ceil(seconds)));
        char* argv[] = {const_cast<char*>("quell-bench"), const_cast<char*>("gpuload"), const_cast<char*>("--seconds"),
                        const_cast<char*>(limit.c_str()), nullptr};
        if (posix_spawn(&pid_, "/proc/self/exe", nullptr, nullptr, argv, environ) != 0)
            throw std::runtime_error("cannot start the GPU load process");
        std::this_thread::sleep_for(std::chrono::seconds(2));   // its CUDA context up and its kernels running
    }
    ~GpuLoadProcess()
    {
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }

private:
    pid_t pid_ = 0;
};

// The sections --only names (comma-separated; empty: every one). Throws on a name that is none.
std::set<std::string> sectionsToRun(const std::string& only)
{
    static const std::set<std::string> known{"blocks", "wait", "stages", "stress"};
    std::set<std::string> chosen;
    std::stringstream list(only);
    for (std::string item; std::getline(list, item, ',');) {
        if (!known.contains(item))
            throw std::invalid_argument("--only: unknown section '" + item + "' (blocks, wait, stages, stress)");
        chosen.insert(item);
    }
    return chosen.empty() ? known : chosen;
}

} // namespace

QUELL_BENCH_COMMAND(engine, "real-time engine: per-block processing time vs block period, deadline misses (48 kHz)")
{
    const std::set<std::string> sections = sectionsToRun(args.only);
    const auto wants = [&](const char* section) { return sections.contains(section); };
    const double seconds = args.seconds > 0.0 ? args.seconds : args.quick ? 5.0 : 60.0;
    const int rate = 48000;
    const std::vector<int> blocks = args.blocks.empty() ? std::vector<int>{128, 256} : args.blocks;
    const auto safetyFor = [&](int block) {
        return args.safetyBlocks >= 0 ? args.safetyBlocks : engine::automaticSafetyBlocks(rate, block);
    };
    bench::BenchReport report("engine");
    const gpu::DeviceInfo dev = gpu::queryDevice();
    report.setInfo("device", dev.available ? dev.description : ("none: " + dev.description));
    report.setInfo("seconds per block-size row", seconds);
    // Scene: coloured far end (speech-like) and its echo through a decaying room, 20 s, looped.
    const auto x = test::colouredNoise(static_cast<std::size_t>(rate) * 20, 1, 0.1);
    const auto h = test::randomSystem(2400, 2, 600.0);
    const auto d = test::convolve(x, h);
    const std::vector<float> ref = test::cast<float>(x), mic = test::cast<float>(d);
    // One row of a block size: the processing time, the whole hand-off (queued to published, the
    // turnaround) against the period, and late blocks with the interval that made each late.
    const auto addBlockRows = [&](const std::string& table, const std::string& load, int block, const EngineRun& r) {
        const auto& p = r.stats.processing;
        const engine::BlockTimelineSummary& t = r.stats.timeline;
        report.add("per-block processing, 48 kHz host, default canceller" + table,
                   {{"load", load},
                    {"block", static_cast<long long>(block)},
                    {"safety blocks", static_cast<long long>(r.stats.safetyBlocks)},
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
        report.add("block timeline, 48 kHz host, default canceller" + table,
                   {{"load", load},
                    {"block", static_cast<long long>(block)},
                    {"safety blocks", static_cast<long long>(r.stats.safetyBlocks)},
                    {"priorities", priorities(r)},
                    {"callback interval max us", t.callbackInterval.maxUs},
                    {"wait p99.9 us", t.waitBeforePickup.p999Us},
                    {"wait max us", t.waitBeforePickup.maxUs},
                    {"hand-back p99.9 us", t.handBack.p999Us},
                    {"turnaround p99.9 us", t.turnaround.p999Us},
                    {"turnaround p99.9/period", t.turnaround.p999Us / r.periodUs},
                    {"turnaround max us", t.turnaround.maxUs},
                    {"late (worker)", static_cast<long long>(t.lateBlocks)},
                    {"by wait", static_cast<long long>(t.lateByWait)},
                    {"by processing", static_cast<long long>(t.lateByProcessing)},
                    {"by hand-back", static_cast<long long>(t.lateByHandBack)},
                    {"by early callback", static_cast<long long>(t.lateByEarlyCallback)}});
    };
    if (wants("blocks"))
        for (const int block : blocks)
            addBlockRows("", "none", block, runRealtime(rate, block, seconds, mic, ref, {}, engine::EngineSpec{}.workerWait, safetyFor(block)));
    // Stress: the same rows (a quarter of the time, at least 5 s) beside every core busy, then beside a
    // second process that keeps the GPU busy.
    if (wants("stress")) {
        const double stressSeconds = std::max(5.0, seconds / 4.0);
        for (const int block : blocks) {
            const CpuLoad load;
            const EngineRun r = runRealtime(rate, block, stressSeconds, mic, ref, {}, engine::EngineSpec{}.workerWait, safetyFor(block));
            addBlockRows(", under load", "every core busy (" + std::to_string(load.threads()) + " threads)", block, r);
        }
        if (dev.available)
            for (const int block : blocks) {
                const GpuLoadProcess load(stressSeconds + 30.0);
                const EngineRun r = runRealtime(rate, block, stressSeconds, mic, ref, {}, engine::EngineSpec{}.workerWait, safetyFor(block));
                addBlockRows(", under load", "GPU busy (a second process)", block, r);
            }
    }
    // The idle worker's wait: polling against spinning and the default (anticipate), 128-sample blocks
    // with no safety block.
    using Wait = engine::EngineSpec::WorkerWait;
    for (const auto wait : {Wait::Poll, Wait::Spin, Wait::Anticipate}) {
        if (!wants("wait"))
            break;
        const EngineRun r = runRealtime(rate, 128, seconds / 2.0, mic, ref, {}, wait);
        const engine::BlockTimelineSummary& t = r.stats.timeline;
        report.add("worker wait, 128-sample blocks at 48 kHz",
                   {{"wait", std::string(wait == Wait::Spin ? "spin" : wait == Wait::Poll ? "poll 100 us" : "anticipate")},
                    {"priorities", priorities(r)},
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
        if (!wants("stages"))
            break;
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
