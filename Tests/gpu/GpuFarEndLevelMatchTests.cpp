// SPDX-License-Identifier: GPL-3.0-or-later
// The canceller's level match on the GPU RLS: a far end 20 dB under speech level cancelled about as
// deeply as one at speech level (the GPU block RLS takes the matched delta, GpuBlockRls::setRestartDelta).
#include <catch2/catch.hpp>

#include "aec/EchoCanceller.h"
#include "support/QuietFarEndScene.h"

using namespace quell;

TEST_CASE("the canceller on a GPU: a far end 20 dB under speech level is cancelled about as deeply as one at speech level",
          "[gpu][levelmatch]")
{
    aec::EchoCancellerSettings s;
    s.backend = aec::Backend::Gpu;
    s.filter = aec::FilterKind::Rls;
    s.taps = 2048;
    const double loud = test::quietFarEndReductionDb(s, 0.05), quiet = test::quietFarEndReductionDb(s, 0.005);
    INFO("GPU RLS 2048 taps, echo reduction from 1 s to 5 s: far end at -26 dBFS " << loud << " dB, at -46 dBFS " << quiet << " dB");
    CHECK(loud > 30.0);
    CHECK(quiet > loud - 3.0);
}
