// SPDX-License-Identifier: GPL-3.0-or-later
// The echo canceller's output and decisions do not depend on how its input is split into calls: a call
// that crosses a foreground segment's end runs the adaptive filter once over both sides
// (EchoCanceller::processAcrossSegmentEnd), a call of one sample never does, and both give the same bits.
#include <catch2/catch.hpp>

#include "support/CancellerCallSplit.h"

using namespace quell;

TEST_CASE("Echo canceller: the same samples and decisions in calls of any size, across a path change", "[aec][twopath][pathchange]")
{
    // Two-path, the path-change restart, the loudspeaker distortion stage and the suppressor all on.
    aec::EchoCancellerSettings s;
    s.taps = 256;
    s.backend = aec::Backend::Cpu;
    s.cpuThreads = 1;
    s.maxDelaySeconds = 0.0;
    s.distortionFilter = true;
    REQUIRE(s.twoPath);
    REQUIRE(s.restartOnPathChange);
    test::checkEveryCallSplit(s, 66);
}

TEST_CASE("Echo canceller: the Kalman filter gives the same samples in calls of any size", "[aec][twopath][kalman]")
{
    aec::EchoCancellerSettings s;
    s.taps = 256;
    s.backend = aec::Backend::Cpu;
    s.filter = aec::FilterKind::Kalman;
    s.maxDelaySeconds = 0.0;
    test::checkEveryCallSplit(s, 68);
}
