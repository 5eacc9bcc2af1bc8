// SPDX-License-Identifier: GPL-3.0-or-later
// aec::SegmentLeader: which of several filters' errors makes the output, decided at segment ends.
#include <catch2/catch.hpp>

#include <vector>

#include "aec/SegmentLeader.h"

using quell::aec::SegmentLeader;

namespace {

// `samples` (one whole segment unless said) in which filter k's error is level[k] at every sample, in
// calls of `call` samples.
void segment(SegmentLeader& lead, const std::vector<float>& level, std::size_t call, std::size_t samples = SegmentLeader::kSegment)
{
    for (std::size_t left = samples; left > 0;) {
        const std::size_t n = std::min({call, left, lead.samplesToSegmentEnd()});
        for (std::size_t k = 0; k < level.size(); ++k)
            lead.add(k, std::vector<float>(n, level[k]));
        lead.advance(n);
        left -= n;
    }
}

} // namespace

TEST_CASE("SegmentLeader: another filter leads only from a segment end, and only under 0.8 of the leader's error energy",
          "[segment-leader]")
{
    SegmentLeader lead(3);
    CHECK(lead.leader() == 0);
    CHECK(lead.samplesToSegmentEnd() == SegmentLeader::kSegment);
    // Energies 1, 0.81, 0.9 of the leader's: no one is under 0.8, the lead stays.
    segment(lead, {1.0f, 0.9f, 0.95f}, 7);
    CHECK(lead.leader() == 0);
    // Filter 2 at 0.64 of the energy, filter 1 at 0.72: the lowest takes the lead.
    segment(lead, {1.0f, 0.85f, 0.8f}, 160);
    CHECK(lead.leader() == 2);
    // Mid-segment the lead holds, however the errors look so far.
    segment(lead, {0.0f, 0.0f, 1.0f}, 80, 80);
    CHECK(lead.leader() == 2);
    CHECK(lead.samplesToSegmentEnd() == 80);
    // At the segment's end the lowest takes it (0 and 1 tie: the first of them).
    segment(lead, {0.0f, 0.0f, 1.0f}, 80, 80);
    CHECK(lead.leader() == 0);
    // Equal errors keep the leader.
    segment(lead, {1.0f, 1.0f, 1.0f}, 33);
    CHECK(lead.leader() == 0);
    segment(lead, {1.0f, 0.5f, 1.0f}, 160);
    REQUIRE(lead.leader() == 1);
    lead.reset();
    CHECK(lead.leader() == 0);
    CHECK(lead.samplesToSegmentEnd() == SegmentLeader::kSegment);
    // advance() says whether it ended a segment.
    CHECK_FALSE(lead.advance(100));
    CHECK(lead.advance(60));
    CHECK_FALSE(lead.advance(1));
    CHECK(lead.advance(159));
}
