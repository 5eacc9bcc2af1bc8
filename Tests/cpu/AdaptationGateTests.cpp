// SPDX-License-Identifier: GPL-3.0-or-later
// AdaptationGate: the filter learns while the far end could explain a part of the microphone, not while
// a faint far end sits under a talking near end; the echo path's gain is learnt from a cancelling
// foreground.
#include <catch2/catch.hpp>

#include <cmath>

#include "aec/AdaptationGate.h"

using namespace quell;

namespace {

double energyDb(double db) { return std::pow(10.0, db / 10.0); }

} // namespace

TEST_CASE("The adaptation gate pauses on a far end too faint to explain the microphone", "[aec][gate]")
{
    aec::AdaptationGate g;
    g.prepare({});
    // Far-end speech at -26 dBFS, its echo at -32 dBFS: adapt.
    CHECK(g.segment(energyDb(-32), energyDb(-26), energyDb(-32), 0.0));
    // Double talk, near end 6 dB over the echo: still adapt (the foreground's probation keeps the near
    // end out of the output, not this gate).
    CHECK(g.segment(energyDb(-25), energyDb(-26), energyDb(-25), 0.0));
    // A lone near end at -32 dBFS over far-end line noise at -90 dBFS: pause.
    CHECK_FALSE(g.segment(energyDb(-32), energyDb(-90), energyDb(-32), 0.0));
    // ... at -70 dBFS too (with the initial +10 dB of echo path gain, 28 dB under the microphone).
    CHECK_FALSE(g.segment(energyDb(-22), energyDb(-70), energyDb(-22), 0.0));
    CHECK(g.pausedSegments() == 2);
    // A silent microphone: nothing to learn wrongly, adapt.
    CHECK(g.segment(0.0, energyDb(-26), 0.0, 0.0));
}

TEST_CASE("The adaptation gate learns the echo path's gain from a cancelling foreground", "[aec][gate]")
{
    aec::AdaptationGate g;
    g.prepare({});
    CHECK(g.echoGainDb() == Approx(10.0));
    // The foreground cancels 30 dB: echo estimate -32 dBFS from a far end at -26: a gain of -6 dB.
    for (int i = 0; i < 1000; ++i)
        g.segment(energyDb(-32), energyDb(-26), energyDb(-62), energyDb(-32));
    CHECK(g.echoGainDb() == Approx(-6.0).margin(0.1));
    // A far end at -70 dBFS could now make -76 dBFS of echo: under a near end at -35 dBFS that is 41 dB
    // down, and the filter pauses; before the gain was known (+10 dB: 25 dB down) it learnt.
    CHECK_FALSE(g.segment(energyDb(-35), energyDb(-70), energyDb(-35), 0.0));
    aec::AdaptationGate fresh;
    fresh.prepare({});
    CHECK(fresh.segment(energyDb(-35), energyDb(-70), energyDb(-35), 0.0));
    // A foreground that does not cancel (double talk) teaches it nothing.
    const double before = g.echoGainDb();
    for (int i = 0; i < 100; ++i)
        g.segment(energyDb(-20), energyDb(-26), energyDb(-21), energyDb(-32));
    CHECK(g.echoGainDb() == Approx(before));
}
