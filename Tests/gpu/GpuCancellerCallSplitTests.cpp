// SPDX-License-Identifier: GPL-3.0-or-later
// The echo canceller on the GPU gives the same samples and decisions in calls of any size: a call that
// crosses a foreground segment's end runs the block RLS once over both sides (one round trip to the
// device, GpuBlockRls::processSplit), calls of one sample run it piece by piece.
#include <catch2/catch.hpp>

#include "support/CancellerCallSplit.h"

using namespace quell;

TEST_CASE("the canceller on a GPU: the same samples and decisions in calls of any size, across a path change", "[gpu][twopath]")
{
    aec::EchoCancellerSettings s;
    s.taps = 256;
    s.backend = aec::Backend::Gpu;
    s.maxDelaySeconds = 0.0;
    s.distortionFilter = true;
    test::checkEveryCallSplit(s, 67);
}
