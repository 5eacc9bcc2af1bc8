// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Which of several adaptive filters, run side by side on the same samples, makes the output: the one
// whose error has been lowest over the last segment (10 ms at 16 kHz) leads until another's falls under
// kTakeOverBelow of the leader's over a segment. The lead changes only at segment ends counted from the
// start, so the output does not depend on how the signal is split into calls. Used by the CPU's fast RLS
// with its shorter companions (CpuRlsFilter.cpp) and by a stereo far end's filters (the two-channel fast
// RLS, the Kalman filter, the fast RLS on the channels' mean: CpuStereoFilter.cpp); each says why it runs
// several.
//
// Per call of the filters: run each on at most samplesToSegmentEnd() samples, add() each one's error,
// take leader()'s error as the output, then advance() by the samples run.
//
// Threading: one thread; nothing allocates after construction.
#include <cstddef>
#include <span>
#include <vector>

namespace quell::aec {

class SegmentLeader {
public:
    static constexpr std::size_t kSegment = 160;
    static constexpr double kTakeOverBelow = 0.8;

    explicit SegmentLeader(std::size_t filters) : energy_(filters, 0.0) {}
    std::size_t samplesToSegmentEnd() const { return kSegment - inSegment_; }
    // Filter k's error over the samples about to be advanced past.
    void add(std::size_t k, std::span<const float> error);
    // The lead for the next segment is decided where this ends one; returns whether it did.
    bool advance(std::size_t samples);
    std::size_t leader() const { return leader_; }
    // Filter 0 leads again, from a new segment.
    void reset();

private:
    std::vector<double> energy_;   // each filter's error energy in this segment
    std::size_t leader_ = 0, inSegment_ = 0;
};

} // namespace quell::aec
