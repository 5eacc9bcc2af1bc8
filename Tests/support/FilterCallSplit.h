// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A LinearEchoFilter over a whole signal in calls of 1, 7, 160, 333, 59 and 1000 samples in turn, under
// the real-time probe: for the tests that a filter's output does not depend on how its input is split
// and that it neither allocates nor locks after construction.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <span>
#include <vector>

#include "aec/LinearEchoFilter.h"
#include "support/RealtimeProbe.h"

namespace quell::test {

// mic: the microphone; ref: its far end, `channels` interleaved. Returns the error; the probe's counts are
// test::realtimeViolations() afterwards.
inline std::vector<float> processInSplitCalls(aec::LinearEchoFilter& filter, std::span<const float> mic,
                                              std::span<const float> ref, std::size_t channels)
{
    std::vector<float> e(mic.size());
    const std::size_t sizes[] = {1, 7, 160, 333, 59, 1000};
    resetRealtimeViolations();
    RealtimeProbe probe;
    for (std::size_t at = 0, k = 0; at < mic.size(); ++k) {
        const std::size_t n = std::min(sizes[k % std::size(sizes)], mic.size() - at);
        filter.processChannels(mic.subspan(at, n), ref.subspan(channels * at, channels * n), std::span(e).subspan(at, n));
        at += n;
    }
    return e;
}

} // namespace quell::test
