// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The real-time engine: the audio callback hands its microphone and far-end samples to a worker thread
// through lock-free FIFOs and takes back the output that is due; the worker runs the echo pipeline
// (resample, cancel on the GPU or the CPU, resample back).
//
// Latency is known at prepare: one host block (the output of block k is the input of block k-1, so the
// worker has one block period to process it) plus the resamplers' group delay, plus S host blocks when
// the user asks for S safety blocks (the output of block k is then the input of block k-1-S: S more
// periods of slack for a late wake-up or a busy GPU, paid for in latency).
//
// Deadline misses: when the callback finds less output than it needs, it plays the microphone, delayed
// by the same latency, at the output's level relative to it over the blocks before (FallbackGain.h), for
// the missing samples, counts the miss, and drops the worker's late output for those samples when it
// arrives, so the stream stays aligned. Not a CPU echo canceller: a second canceller run in parallel
// would need its own O(N^2) state kept in step with the GPU's for the rare miss, while the scaled
// microphone is exact in time, costs one multiply, and a miss lasts one block.
//
// Threading: prepare(), release(), applySettings(), stats() from a control thread; process() from the
// audio thread only, which never waits, locks, allocates or makes a system call. In offline mode there
// is no worker: process() runs the pipeline itself and there are no deadlines (quell-render), so a file
// render and a live run produce the same samples.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/EchoPipeline.h"
#include "dsp/DelayLine.h"
#include "dsp/SpscRing.h"
#include "engine/BlockTimeline.h"
#include "engine/FallbackGain.h"
#include "engine/ThreadPriority.h"
#include "engine/TimingHistogram.h"

namespace quell::engine {

struct EngineSpec {
    int hostRate = 48000;
    int maxHostBlock = 256;   // the largest block the host passes; also the engine's added delay
    int micChannels = 1;
    int farEndChannels = 1;
    int cancellerRate = aec::kCancellerRate;   // the canceller's own rate (resampled to and from the host's)
    aec::EchoCancellerSettings aec{};
    bool offline = false;     // no worker thread, no deadline
    int safetyBlocks = 0;     // extra host blocks of latency, 0 to RealtimeEngine::kMaxSafetyBlocks
    // How the idle worker waits for the next block. The audio thread never signals it (a semaphore
    // post is a system call on the callback), so the worker looks:
    //  - Poll: sleeps 100 us between looks (a wake-up costs the sleep plus the scheduler's latency:
    //    p99.9 1.1 ms on an H100 host, quell-bench engine);
    //  - Spin: keeps looking, yielding between looks (no wake-up; one core busy while audio runs);
    //  - Anticipate (default): spins (keeping its core: no yield) within a margin (a quarter block, 0.2
    //    to 1 ms) of the moment the next block is due (the last one's queueing plus its duration), polls
    //    outside it.
    enum class WorkerWait { Poll, Spin, Anticipate };
    WorkerWait workerWait = WorkerWait::Anticipate;
};

// The safety blocks a host block gets unless the user says otherwise: one when a block lasts under 4 ms
// (128 frames or fewer at 48 kHz), none above. Why: quell-bench engine on H100 and H200 hosts
// (Source/engine/NOTES.md) saw late 128-frame blocks on most instances, 1 to 19 in a run, nearly all
// from a host callback that came early after a late one (the card thread's interval reached 4.4 to
// 5.8 ms against a 2.67 ms period), which slack absorbs and no faster kernel can; at 256 frames none.
int automaticSafetyBlocks(int hostRate, int hostBlock);

struct EngineStats {
    std::uint64_t callbacks = 0;
    std::uint64_t lateBlocks = 0;      // callbacks that played the fallback for some samples
    std::uint64_t lateSamples = 0;
    std::uint64_t inputOverruns = 0;   // input dropped because the worker fell far behind
    ThreadPriority workerPriority;     // what the worker got (ThreadPriority.h)
    TimingSummary processing;          // per worker block
    BlockTimelineSummary timeline;     // where each block's time goes, and why late blocks were late
    int latencySamples = 0;
    double latencyMs = 0.0;
    int safetyBlocks = 0;
    std::string mode;                  // which canceller runs, e.g. "GPU float32 block RLS (32 samples a pass), 4096 taps, on ..."
    bool onGpu = false;
    double erleDb = 0.0;               // over the last ~0.5 s of far-end activity
    double micLevelDb = -120.0, refLevelDb = -120.0, outLevelDb = -120.0; // RMS, last 100 ms
    double driftPpm = 0.0;             // clock drift the canceller compensates (first microphone channel)
};

class RealtimeEngine {
public:
    static constexpr int kMaxSafetyBlocks = 4;
    // The most host blocks the worker takes in one pipeline call when it finds several queued (it fell
    // behind): on a GPU another process shares, every call waits for that process's time slice, so the
    // blocks behind a slow one cost one wait together instead of one each (Source/engine/NOTES.md).
    static constexpr int kMaxBlocksPerCall = 4;

    RealtimeEngine();
    ~RealtimeEngine();
    RealtimeEngine(const RealtimeEngine&) = delete;
    RealtimeEngine& operator=(const RealtimeEngine&) = delete;

    // Throws std::invalid_argument on bad settings, aec::BackendUnavailable when the GPU is required
    // but missing. Starts the worker (unless offline).
    void prepare(const EngineSpec& spec);
    void release();

    // Audio thread. mic: micChannels pointers; refs: farEndChannels pointers (the far end); out:
    // micChannels pointers; n any size (blocks above maxHostBlock are split, and may miss their deadline).
    void process(const float* const* mic, const float* const* refs, float* const* out, int n) noexcept;
    // One far-end channel (with farEndChannels = 2 it feeds both).
    void process(const float* const* mic, const float* ref, float* const* out, int n) noexcept
    {
        const float* refs[aec::kMaxFarEndChannels] = {ref, ref};
        process(mic, refs, out, n);
    }

    // Settings change (filter length, lambda, backend): built here, swapped in by the worker between
    // blocks. The rates and channel counts (microphone and far end) stay those of prepare().
    void applySettings(const aec::EchoCancellerSettings& settings);
    void requestReset() { resetRequested_.store(true, std::memory_order_release); }
    // Freeze, suppression amount, comfort noise: any thread, lock-free (the audio thread may call it);
    // the worker applies them before its next block.
    void setControls(const aec::CancellerControls& controls);

    // Safety blocks, changed while running (any thread, lock-free; the buffers were sized at prepare for
    // the most): the latency moves by whole host blocks at the next callback, which bridges the step
    // with what a late block plays (not counted late). Clamped to 0..kMaxSafetyBlocks.
    void setSafetyBlocks(int blocks);
    int safetyBlocks() const { return safetyBlocks_.load(std::memory_order_relaxed); }
    // The output's delay behind the input, safety blocks included.
    int latencySamples() const { return baseLatency_ + safetyBlocks() * spec_.maxHostBlock; }
    EngineStats stats() const;
    // Non-empty when Backend::Auto fell back to the CPU: why.
    const std::string& fallbackReason() const { return fallbackReason_; }
    // The canceller's health counters (first microphone channel); call between blocks or after a run.
    dsp::RlsHealth health() const { return pipeline_ ? pipeline_->canceller().health() : dsp::RlsHealth{}; }
    const EngineSpec& spec() const { return spec_; }
    // The canceller's settings in use (first microphone channel): the spec's, with what was automatic
    // (the filter length) resolved. Call between blocks or after a run.
    aec::EchoCancellerSettings cancellerSettings() const
    {
        return pipeline_ ? pipeline_->canceller().settings() : spec_.aec;
    }
    // Whether that canceller's adaptive filter is an RLS (the forgetting factor is its setting alone).
    bool runsRls() const { return aec::isRls(pipeline_ ? pipeline_->canceller().plan().engine : aec::FilterEngine::CpuRls); }

    // The estimated echo path (first microphone channel's filter weights, at the canceller's rate) for
    // display. The worker copies it about every 100 ms while enabled (in offline mode that copy runs in
    // process(), which has no deadline); the audio thread never touches it. Any thread may read it.
    void enableEchoPathSnapshots(bool on) { snapshotsOn_.store(on, std::memory_order_relaxed); }
    // Copies the latest snapshot into `out` (resized); false when there is none yet.
    bool echoPathSnapshot(std::vector<float>& out) const;

    // Test hook: the worker sleeps this long after each block (to provoke deadline misses).
    void setWorkerDelayForTesting(std::chrono::microseconds delay) { testDelayUs_.store(delay.count()); }
    // Input frames the worker has finished (tests wait on it to pace a run without deadlines).
    std::uint64_t workerFramesForTesting() const { return workerFrames_.load(std::memory_order_acquire); }

private:
    void workerLoop();
    bool workerStep();          // processes one chunk if input is waiting; returns whether it did
    void updateMeters(std::size_t frames);
    aec::CancellerControls loadControls() const;
    // The pipeline for spec_ (its channel layout, rates and block) running `settings`.
    PipelineSpec pipelineSpec(const aec::EchoCancellerSettings& settings) const;

    EngineSpec spec_{};
    std::size_t stride_ = 2;    // floats per input frame: mic channels + far-end channels
    int baseLatency_ = 0;       // one host block plus the pipeline's delay
    std::atomic<int> safetyBlocks_{0};
    std::unique_ptr<EchoPipeline> pipeline_;
    std::atomic<EchoPipeline*> pendingPipeline_{nullptr};
    dsp::SpscRing input_, output_;

    // Audio-thread state.
    std::vector<float> interleaved_;
    dsp::DelayLine dryLine_;    // the microphone, the latency back: what a late block plays, at fallbackGain_
    int appliedSafety_ = 0;     // the safety blocks the last callback ran with
    std::int64_t bridgeFrames_ = 0;   // output frames left in a safety-block step (not counted late)
    struct Hole {
        std::int64_t start, length;   // input frames that never reached the worker
    };
    std::int64_t pushed_ = 0;     // input frames handed over (or lost in holes)
    std::int64_t produced_ = 0;   // output frames played
    std::int64_t cursor_ = 0;     // input index of the next frame in the output FIFO
    std::vector<Hole> holes_;     // reserved at prepare; never grows on the audio thread
    bool degraded_ = false;

    // Worker state.
    std::vector<float> workIn_, workOut_;
    std::vector<std::vector<float>> micScratch_, outScratch_;
    std::vector<std::vector<float>> refScratch_;
    std::thread worker_;
    std::atomic<bool> running_{false};
    std::atomic<bool> resetRequested_{false};
    std::atomic<bool> controlAdapt_{true}, controlComfortNoise_{true};
    std::atomic<float> controlSuppressionDb_{static_cast<float>(aec::kDefaultSuppressionDb)};
    std::atomic<std::uint32_t> controlsVersion_{0};
    std::uint32_t appliedControls_ = 0;   // worker
    std::atomic<long long> testDelayUs_{0};
    BlockTimeline timeline_;
    std::int64_t queuedFrames_ = 0;    // audio thread: frames that entered the input FIFO
    std::int64_t pickedFrames_ = 0;    // worker: frames taken from it
    double meterMic_ = 0.0, meterOut_ = 0.0, meterRef_ = 0.0, erleMic_ = 0.0, erleOut_ = 0.0;
    std::size_t meterFrames_ = 0;
    FallbackGain fallbackGain_;   // worker observes, audio thread reads

    // Published counters and meters.
    std::atomic<std::uint64_t> workerFrames_{0};
    std::atomic<std::uint64_t> callbacks_{0}, lateBlocks_{0}, lateSamples_{0}, overruns_{0};
    std::atomic<float> driftPpm_{0.0f};
    std::atomic<float> erleDb_{0.0f}, micDb_{-120.0f}, refDb_{-120.0f}, outDb_{-120.0f};
    std::string mode_, fallbackReason_;
    std::atomic<bool> onGpu_{false};
    std::atomic<ThreadPriority> workerPriority_{};
    std::int64_t lastPickedFrames_ = 0;   // worker: the size of the last block it took
    std::atomic<bool> snapshotsOn_{false};
    mutable std::mutex echoPathMutex_;   // worker vs. readers of the snapshot; never the audio thread
    std::vector<float> echoPath_;
};

} // namespace quell::engine
