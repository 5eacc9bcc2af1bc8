// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The calls of one process that each arrive on a thread of their own (a GStreamer pipeline per call: the
// quellaec element) as the streams of one MultiStreamCanceller, so that on the GPU one batched filter
// takes all of them (issue 18). Every call with the same settings joins the same engine; a full engine
// makes another.
//
// A call hands in one 10 ms block at the canceller's rate and waits for its output. The engine's own
// thread runs a batch once every active call has handed in its block, or once the first block waiting
// has waited `batchWait`. A call is active from its first block on; one that misses a batch (its
// pipeline paused, a stalled source) is not waited for again until its next block comes, so it holds
// the others back once, by the wait, and not at every batch. A late call's block goes into the next
// batch. Its canceller, and on the GPU its stream of the batch filter, holds still meanwhile
// (MultiStreamCanceller::process), so its samples do not depend on the timing; missed() counts the
// blocks that active calls missed.
//
// A call that has fallen behind (blocks queued after the one it hands in: SharedCall says so) catches
// up: a batch runs for the calls ready, and the others hold still. On the CPU it runs at once; on the GPU,
// where a batch costs about the same for a few calls as for all, once the engine has rested as long as its
// last batch took, and not while a batch takes more than half the period (the calls go in lock step).
//
// A batch that fails (the GPU lost, out of memory) fails the engine: process() throws its reason
// (std::runtime_error) to every call, then and after, and a call that joins again gets a new engine.
//
// Threading: every member from any thread; process() of one stream from one thread at a time, and not
// while it leaves. Only the engine's thread runs batches; joining and leaving wait until no batch runs;
// controls are queued for the stream's next batch. The engine's thread asks for the pool's priority.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/MultiStreamCanceller.h"
#include "engine/TimingHistogram.h"

namespace quell::engine {

struct SharedCallSettings {
    // The engine's streams. sampleRate is the cancellers' (callers resample); maxStreams 0: automatic,
    // 64 where a GPU is usable, else 8 (each CPU stream's filter memory is taken at prepare: RLS of 1024
    // taps holds megabytes).
    MultiStreamSettings engine{.maxStreams = 0};
    // The longest a batch waits for a late call once another's block is in. Above the 10 ms period, so
    // that calls whose blocks arrive spread over the period (live pipelines started at different times)
    // still go in one batch.
    std::chrono::microseconds batchWait{15000};
};

class SharedCallEngine {
public:
    // A stream of the process's engine for these settings: one with a free stream, or a new one.
    // Throws as MultiStreamCanceller::prepare.
    struct Membership {
        std::shared_ptr<SharedCallEngine> engine;
        int stream = -1;
    };
    static Membership join(const SharedCallSettings& settings);

    explicit SharedCallEngine(const SharedCallSettings& settings);   // prepares; starts the thread
    ~SharedCallEngine();
    SharedCallEngine(const SharedCallEngine&) = delete;
    SharedCallEngine& operator=(const SharedCallEngine&) = delete;

    void leave(int stream);
    // One block of blockSamples() of a joined stream: its far-end channels at far[0..farEndChannels).
    // Returns once the batch that took it has run; out may be mic. Throws std::runtime_error when the
    // engine has failed. behind: the caller has more blocks queued after this one (it fell behind).
    void process(int stream, const float* mic, std::span<const float* const> far, float* out, bool behind = false);
    // As MultiStreamCanceller::setControls; applied before the stream's next block.
    void setControls(int stream, const aec::CancellerControls& controls);

    // The longest a block stays in the engine when it is on time: the wait for the other calls and a
    // batch of up to a block's period (a caller that reports latency adds it). H200, 64 live pipelines:
    // a block's turnaround reached 17.7 ms at p99.9, past the 15 ms wait alone.
    std::chrono::microseconds engineDelay() const;
    std::size_t blockSamples() const { return calls_.blockSamples(); }
    int latencySamples() const { return calls_.latencySamples(); }
    int capacity() const { return calls_.maxStreams(); }
    int joined() const;
    std::string description() const { return calls_.description(); }
    bool onGpu() const { return calls_.onGpu(); }
    dsp::RlsHealth health(int stream) const;
    std::optional<double> erleDb(int stream) const;
    std::uint64_t batches() const;
    // Blocks of joined streams that a batch ran without (their call was late).
    std::uint64_t missed() const;
    bool failed() const;
    // Where a block's time goes, since the engine started: how long a batch's first block waited
    // for the others, the batch itself, and each block from its hand-in to its output (the wait, the
    // batch, and a batch before it that it missed).
    struct Timing {
        TimingSummary wait, batch, turnaround;
        std::uint64_t batches = 0, missed = 0;
        std::uint64_t behind = 0;   // blocks handed in with more queued behind them (their call had fallen behind)
    };
    Timing timing() const;
    // timing() in a line: "N batches, M blocks missed, B behind; wait ..., batch ..., turnaround ... (median / p99.9 ms)".
    std::string timingText() const;

private:
    bool tryOpen(int& stream);
    void run();
    struct Slot {
        bool ready = false, done = false;
        bool active = false;   // waited for: it has handed in a block since it joined or last missed a batch
        bool behind = false;   // its caller has more blocks queued
        std::optional<aec::CancellerControls> controls;
        std::vector<float> mic, far, out;   // far: channels one after another
    };
    const std::chrono::microseconds batchWait_;
    const int priority_;
    const int rate_;
    MultiStreamCanceller calls_;
    mutable std::mutex mutex_;
    mutable std::condition_variable work_, done_;
    std::vector<Slot> slots_;
    std::vector<MultiStreamCanceller::StreamBlock> batch_;
    int joined_ = 0, active_ = 0, ready_ = 0, behind_ = 0;
    bool busy_ = false, stopping_ = false;
    std::string failure_;   // why the engine failed; empty while it works
    std::chrono::steady_clock::time_point firstReady_{};
    std::uint64_t batches_ = 0, missed_ = 0, behindBlocks_ = 0;
    TimingHistogram waitTimes_, batchTimes_, turnaroundTimes_;   // added under mutex_
    std::thread thread_;
    friend struct SharedCallRegistry;
};

} // namespace quell::engine
