// SPDX-License-Identifier: GPL-3.0-or-later
// BlockTimeline on a scripted timeline (nanosecond stamps given, not measured): every late block is
// found, and each is blamed on the interval that made it late.
#include <catch2/catch.hpp>

#include "engine/BlockTimeline.h"

using quell::engine::BlockTimeline;

namespace {

constexpr std::int64_t us = 1000;
constexpr std::int64_t period = 1000 * us;   // one host block: 1 ms

// Block k queued at `queuedAt`, waits `wait`, the pipeline runs `processing`, and the worker spends
// 20 us around it; the engine runs with `safetyBlocks`.
void runBlock(BlockTimeline& t, std::int64_t k, std::int64_t queuedAt, std::int64_t wait, std::int64_t processing,
              int safetyBlocks = 0)
{
    t.callbackEntered(queuedAt);
    t.queued(k * 48, queuedAt);
    const std::int64_t picked = queuedAt + wait;
    t.picked(k * 48, picked, safetyBlocks);
    t.processed(picked + 10 * us, picked + 10 * us + processing);
    t.published(picked + 20 * us + processing);
}

} // namespace

TEST_CASE("BlockTimeline finds late blocks and blames the interval that made each late", "[engine][timeline]")
{
    BlockTimeline t;
    t.prepare(period);
    std::int64_t at = 1'000'000 * us;
    for (std::int64_t k = 0; k < 200; ++k) {
        std::int64_t wait = 50 * us, processing = 300 * us, next = period;
        if (k == 50)
            wait = 900 * us;         // woken late: 50 + 900 + 20 + 300 > 1000
        if (k == 100)
            processing = 1200 * us;  // a slow pipeline
        if (k == 150)
            next = 300 * us;         // the host calls again after a third of a period
        runBlock(t, k, at, wait, processing);
        at += next;
    }
    t.callbackEntered(at);
    t.queued(200 * 48, at);
    t.picked(200 * 48, at + 50 * us);   // judges block 199
    const auto s = t.summary();
    CHECK(s.lateBlocks == 3);
    CHECK(s.lateByWait == 1);
    CHECK(s.lateByProcessing == 1);
    CHECK(s.lateByEarlyCallback == 1);
    CHECK(s.lateByHandBack == 0);
    CHECK(s.callbackInterval.count == 200);
    CHECK(s.callbackInterval.maxUs == Approx(1000.0));
    CHECK(s.waitBeforePickup.medianUs == Approx(50.0).epsilon(0.05));   // bins are 4.9 % wide
    CHECK(s.waitBeforePickup.maxUs == Approx(900.0));
    CHECK(s.turnaround.maxUs == Approx(50.0 + 20.0 + 1200.0));
    CHECK(t.processing().count == 200);
}

TEST_CASE("BlockTimeline with safety blocks: a block is late only past its 1 + S periods", "[engine][timeline]")
{
    BlockTimeline t;
    t.prepare(period);
    std::int64_t at = 1'000'000 * us;
    for (std::int64_t k = 0; k < 202; ++k) {   // blocks 200 and 201's pick-ups judge 198 and 199
        std::int64_t wait = 50 * us, processing = 300 * us, next = period;
        if (k == 50)
            wait = 900 * us;          // late with no safety block, inside two periods
        if (k == 100)
            processing = 1500 * us;   // the same
        if (k == 150)
            next = 300 * us;          // an early callback: block 150 still has 1.3 periods
        if (k == 170)
            processing = 2100 * us;   // past two periods: late
        if (k == 180)
            wait = 1990 * us;         // late, by the wait
        runBlock(t, k, at, wait, processing, 1);
        at += next;
    }
    const auto s = t.summary();
    CHECK(s.lateBlocks == 2);
    CHECK(s.lateByProcessing == 1);
    CHECK(s.lateByWait == 1);
    CHECK(s.lateByEarlyCallback == 0);

    // Back to no safety block: the next slow block (1.5 periods) is late again.
    for (std::int64_t k = 202; k < 210; ++k) {
        runBlock(t, k, at, 50 * us, k == 205 ? 1500 * us : 300 * us);
        at += period;
    }
    CHECK(t.summary().lateBlocks == 3);
    CHECK(t.summary().lateByProcessing == 2);
}

TEST_CASE("BlockTimeline: a block picked up late because the worker was behind is the wait's", "[engine][timeline]")
{
    BlockTimeline t;
    t.prepare(period);
    std::int64_t at = 1'000'000 * us;
    // Ten blocks on time, then blocks 10-12 each take 1.5 periods to process: 10 is late by
    // processing, 11 and 12 are late by both and are blamed on the larger excess.
    for (std::int64_t k = 0; k < 10; ++k, at += period)
        runBlock(t, k, at, 50 * us, 300 * us);
    const std::int64_t slowStart = at;
    std::int64_t workerFree = slowStart;
    for (std::int64_t k = 10; k < 20; ++k, at += period) {
        const std::int64_t processing = k < 13 ? 1500 * us : 300 * us;
        const std::int64_t picked = std::max(at + 50 * us, workerFree);
        runBlock(t, k, at, picked - at, processing);
        workerFree = picked + 20 * us + processing;
    }
    t.callbackEntered(at);
    t.queued(20 * 48, at);
    t.picked(20 * 48, std::max(at + 50 * us, workerFree));
    const auto s = t.summary();
    CHECK(s.lateBlocks >= 3);
    CHECK(s.lateByProcessing >= 1);
    CHECK(s.lateByWait >= 1);
    CHECK(s.lateByEarlyCallback == 0);
    CHECK(s.lateByWait + s.lateByProcessing + s.lateByHandBack + s.lateByEarlyCallback == s.lateBlocks);
}

TEST_CASE("BlockTimeline: a chunk the FIFO refused does not lend its time to the next one", "[engine][timeline]")
{
    BlockTimeline t;
    t.prepare(period);
    const std::int64_t at = 1'000'000 * us;
    t.queued(0, at);                 // refused by a full FIFO: the same first frame comes again
    t.queued(0, at + 5 * period);
    t.picked(0, at + 5 * period + 40 * us);
    CHECK(t.lastQueuedNs() == at + 5 * period);
    CHECK(t.summary().waitBeforePickup.maxUs == Approx(40.0));
}
