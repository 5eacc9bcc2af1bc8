// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/BlockTimeline.h"

#include <algorithm>
#include <chrono>

namespace quell::engine {

std::int64_t BlockTimeline::nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void BlockTimeline::prepare(std::int64_t periodNs)
{
    periodNs_ = periodNs;
    for (Stamp& s : stamps_) {
        s.firstFrame.store(-1, std::memory_order_relaxed);
        s.ns.store(0, std::memory_order_relaxed);
    }
    nextStamp_ = 0;
    lastCallbackNs_ = 0;
    current_ = Block{};
    awaitingFirst_ = awaitingCount_ = 0;
    for (TimingHistogram* h : {&callbackInterval_, &wait_, &processing_, &handBack_, &turnaround_})
        h->reset();
    for (auto* c : {&late_, &byWait_, &byProcessing_, &byHandBack_, &byEarly_})
        c->store(0, std::memory_order_relaxed);
}

void BlockTimeline::callbackEntered(std::int64_t nowNs)
{
    if (lastCallbackNs_ != 0)
        callbackInterval_.add(nowNs - lastCallbackNs_);
    lastCallbackNs_ = nowNs;
}

void BlockTimeline::queued(std::int64_t firstFrame, std::int64_t nowNs)
{
    // Written before the input FIFO's release: the worker sees the stamp once it sees the samples. A
    // chunk the FIFO refused left its stamp at the same first frame: this one takes its place, so the
    // worker never finds the refused chunk's time for these samples.
    if (nextStamp_ > 0 && stamps_[(nextStamp_ - 1) % kStamps].firstFrame.load(std::memory_order_relaxed) == firstFrame)
        --nextStamp_;
    Stamp& s = stamps_[nextStamp_++ % kStamps];
    s.ns.store(nowNs, std::memory_order_relaxed);
    s.firstFrame.store(firstFrame, std::memory_order_release);
}

void BlockTimeline::picked(std::int64_t firstFrame, std::int64_t nowNs, int safetyBlocks)
{
    // The chunk holding firstFrame: the latest stamp at or before it.
    std::int64_t queuedNs = 0, best = -1;
    for (const Stamp& s : stamps_) {
        const std::int64_t f = s.firstFrame.load(std::memory_order_acquire);
        if (f >= 0 && f <= firstFrame && f > best) {
            best = f;
            queuedNs = s.ns.load(std::memory_order_relaxed);
        }
    }
    // This block's queueing is the deadline of the block S + 1 before it: the callback that queued it
    // reads that one's output next.
    if (queuedNs == 0) {
        awaitingCount_ = 0;   // no deadline to judge them by
    } else {
        const int safety = std::clamp(safetyBlocks, 0, kMaxSafetyBlocks);
        while (awaitingCount_ > static_cast<std::size_t>(safety)) {
            judge(awaiting_[awaitingFirst_], queuedNs, safety);
            awaitingFirst_ = (awaitingFirst_ + 1) % awaiting_.size();
            --awaitingCount_;
        }
    }
    current_ = Block{};
    current_.queued = queuedNs;
    current_.picked = nowNs;
    current_.valid = queuedNs != 0;
    if (current_.valid)
        wait_.add(nowNs - queuedNs);
}

void BlockTimeline::processed(std::int64_t startNs, std::int64_t endNs)
{
    current_.start = startNs;
    current_.end = endNs;
    processing_.add(endNs - startNs);
}

void BlockTimeline::published(std::int64_t nowNs)
{
    if (!current_.valid)
        return;
    current_.published = nowNs;
    handBack_.add((current_.start - current_.picked) + (nowNs - current_.end));
    turnaround_.add(nowNs - current_.queued);
    if (awaitingCount_ == awaiting_.size()) {   // only after the safety blocks were lowered
        awaitingFirst_ = (awaitingFirst_ + 1) % awaiting_.size();
        --awaitingCount_;
    }
    awaiting_[(awaitingFirst_ + awaitingCount_++) % awaiting_.size()] = current_;
}

void BlockTimeline::judge(const Block& b, std::int64_t deadlineNs, int safetyBlocks)
{
    if (b.published <= deadlineNs)
        return;
    late_.fetch_add(1, std::memory_order_relaxed);
    // Each interval's excess over its median; the early callback's is how much less than its 1 + S
    // periods separated the block's queueing from its deadline.
    const double wait = static_cast<double>(b.picked - b.queued) * 1e-3 - wait_.summary().medianUs;
    const double processing = static_cast<double>(b.end - b.start) * 1e-3 - processing_.summary().medianUs;
    const double handBack = static_cast<double>((b.start - b.picked) + (b.published - b.end)) * 1e-3 - handBack_.summary().medianUs;
    const double early = static_cast<double>((1 + safetyBlocks) * periodNs_ - (deadlineNs - b.queued)) * 1e-3;
    std::atomic<std::uint64_t>* culprit = &byWait_;
    double worst = wait;
    if (processing > worst) {
        worst = processing;
        culprit = &byProcessing_;
    }
    if (handBack > worst) {
        worst = handBack;
        culprit = &byHandBack_;
    }
    if (early > worst)
        culprit = &byEarly_;
    culprit->fetch_add(1, std::memory_order_relaxed);
}

BlockTimelineSummary BlockTimeline::summary() const
{
    BlockTimelineSummary s;
    s.callbackInterval = callbackInterval_.summary();
    s.waitBeforePickup = wait_.summary();
    s.handBack = handBack_.summary();
    s.turnaround = turnaround_.summary();
    s.lateBlocks = late_.load(std::memory_order_relaxed);
    s.lateByWait = byWait_.load(std::memory_order_relaxed);
    s.lateByProcessing = byProcessing_.load(std::memory_order_relaxed);
    s.lateByHandBack = byHandBack_.load(std::memory_order_relaxed);
    s.lateByEarlyCallback = byEarly_.load(std::memory_order_relaxed);
    return s;
}

} // namespace quell::engine
