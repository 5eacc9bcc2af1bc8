// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Where a block's milliseconds go between the audio callback and its output, on one clock
// (steady_clock): the callback stamps when it queues a block; the worker stamps when it picks it up,
// when the pipeline starts and ends, and when the output is published. The deadline of block k is the
// callback that reads it: the next one, or S later with S safety blocks (the engine's latency is then
// 1 + S blocks, each a period more of slack). Each interval has a distribution,
// and every block published after its deadline is attributed to the interval that made it late: the
// one furthest above its median (an early callback counts with how much earlier than one period it
// came). Why: a late block with a processing time well inside the period is not a slow kernel but a
// late wake-up, a hand-back or the host's clock, and each has a different cure (issue 15).
//
// Threading: callbackEntered() and queued() from the audio thread only (lock-free, no allocation, no
// system call: steady_clock is read through the vDSO); picked(), processed() and published() from the
// worker only; summary() from any thread.
#include <array>
#include <atomic>
#include <cstdint>

#include "engine/TimingHistogram.h"

namespace quell::engine {

struct BlockTimelineSummary {
    TimingSummary callbackInterval;   // between callbacks (the host's clock and scheduling)
    TimingSummary waitBeforePickup;   // queued -> the worker took it (wake-up, polling, a full output FIFO)
    TimingSummary handBack;           // the worker's own time around the pipeline (copies, meters, publish)
    TimingSummary turnaround;         // queued -> output published
    std::uint64_t lateBlocks = 0;     // published after the next callback began
    std::uint64_t lateByWait = 0, lateByProcessing = 0, lateByHandBack = 0, lateByEarlyCallback = 0;
};

class BlockTimeline {
public:
    static std::int64_t nowNs();

    // periodNs: one host block's duration (a callback earlier than that after the last is "early").
    void prepare(std::int64_t periodNs);
    // The most safety blocks (how many callbacks after the next one read a block) picked() judges by.
    static constexpr int kMaxSafetyBlocks = 7;

    // Audio thread.
    void callbackEntered(std::int64_t nowNs);
    void queued(std::int64_t firstFrame, std::int64_t nowNs);

    // Worker: the block starting at input frame firstFrame was taken (with the engine's safety blocks
    // then, 0..kMaxSafetyBlocks), then processed, then published.
    void picked(std::int64_t firstFrame, std::int64_t nowNs, int safetyBlocks = 0);
    void processed(std::int64_t startNs, std::int64_t endNs);
    void published(std::int64_t nowNs);

    // Worker: when the block it took last was queued (0 before the first).
    std::int64_t lastQueuedNs() const { return current_.queued; }

    BlockTimelineSummary summary() const;
    // The pipeline's time per block (as processed() saw it).
    TimingSummary processing() const { return processing_.summary(); }

private:
    // Queue stamps of the last kStamps callbacks' chunks; the worker is never that far behind (the
    // input FIFO holds 8 blocks).
    static constexpr std::size_t kStamps = 64;
    struct Stamp {
        std::atomic<std::int64_t> firstFrame{-1}, ns{0};
    };
    std::array<Stamp, kStamps> stamps_{};
    std::uint64_t nextStamp_ = 0;     // audio thread
    std::int64_t lastCallbackNs_ = 0; // audio thread
    std::int64_t periodNs_ = 0;

    // Worker: the block in flight, and the published ones awaiting their deadlines (oldest first; with
    // S safety blocks, S + 1 of them).
    struct Block {
        std::int64_t queued = 0, picked = 0, start = 0, end = 0, published = 0;
        bool valid = false;
    };
    Block current_{};
    std::array<Block, kMaxSafetyBlocks + 1> awaiting_{};
    std::size_t awaitingFirst_ = 0, awaitingCount_ = 0;
    void judge(const Block& block, std::int64_t deadlineNs, int safetyBlocks);

    TimingHistogram callbackInterval_, wait_, processing_, handBack_, turnaround_;
    std::atomic<std::uint64_t> late_{0}, byWait_{0}, byProcessing_{0}, byHandBack_{0}, byEarly_{0};
};

} // namespace quell::engine
