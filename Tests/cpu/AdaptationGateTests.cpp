// SPDX-License-Identifier: GPL-3.0-or-later
// AdaptationGate: the filter learns while the far end could explain a part of the microphone, not while
// a faint far end sits under a talking near end or could not make an echo above the microphone's noise
// floor; the echo path's gain is learnt from a cancelling foreground.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "aec/AdaptationGate.h"
#include "aec/EchoCanceller.h"
#include "support/CancelWhole.h"
#include "support/Signals.h"

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
    fresh.segment(energyDb(-75), 0.0, energyDb(-75), 0.0);   // the room's noise floor, far end silent
    CHECK(fresh.segment(energyDb(-35), energyDb(-70), energyDb(-35), 0.0));
    // A foreground that does not cancel (double talk) teaches it nothing.
    const double before = g.echoGainDb();
    for (int i = 0; i < 100; ++i)
        g.segment(energyDb(-20), energyDb(-26), energyDb(-21), energyDb(-32));
    CHECK(g.echoGainDb() == Approx(before));
}

TEST_CASE("The adaptation gate pauses on a far end whose echo could not rise above the microphone's noise floor", "[aec][gate]")
{
    aec::AdaptationGate g;
    g.prepare({});
    g.segment(energyDb(-65), 0.0, energyDb(-65), 0.0);   // the room's noise floor, far end silent
    // A near end at -30 dBFS over a line's noise at -70 dBFS: with the initial gain of +10 dB its echo
    // would be -60 dBFS, 35 dB under the near end (the share allows it) but only 5 dB over the floor:
    // pause.
    CHECK_FALSE(g.segment(energyDb(-30), energyDb(-70), energyDb(-30), 0.0));
    // The line at -50 dBFS could make an echo 25 dB over the floor: learn.
    CHECK(g.segment(energyDb(-30), energyDb(-50), energyDb(-30), 0.0));
    // The floor rises only slowly after its minimum (1 dB/s): 10 s of a near end that never pauses take it
    // 10 dB up, not to the near end.
    for (int i = 0; i < 1000; ++i)
        g.segment(energyDb(-30), energyDb(-90), energyDb(-30), 0.0);
    CHECK(g.segment(energyDb(-30), energyDb(-50), energyDb(-30), 0.0));    // -40 dBFS over a -55 floor
    CHECK_FALSE(g.segment(energyDb(-30), energyDb(-58), energyDb(-30), 0.0));   // -48: within 10 dB
    // Once a cancelling filter has measured the gain (-6 dB), the share alone decides: an echo of -73 dBFS
    // under the -65 dBFS floor is within 35 dB of the microphone.
    aec::AdaptationGate known;
    known.prepare({});
    for (int i = 0; i < 1000; ++i)
        known.segment(energyDb(-32), energyDb(-26), energyDb(-65), energyDb(-32));
    known.segment(energyDb(-65), 0.0, energyDb(-65), 0.0);
    CHECK(known.segment(energyDb(-65), energyDb(-67), energyDb(-65), 0.0));
    CHECK_FALSE(known.segment(energyDb(-30), energyDb(-67), energyDb(-30), 0.0));   // 43 dB under a near end
}

TEST_CASE("A far end that starts after near-end speech over a faint line is cancelled at once", "[aec][gate]")
{
    // 6 s of a lone near end (bursts of coloured noise at about -30 dBFS) over a far end that carries only
    // a line's noise at -80 dBFS, in a room whose microphone noise is at -65 dBFS; then the near end stops
    // and far-end bursts play into a room with a 0.2 s tail, under a 4096-tap Kalman filter. The echo
    // reduction over the 4 s after the start must be what it is when the line was silent before: the
    // filter and the suppressor's far-end models learnt nothing from the line (they did: 8 dB of echo
    // reduction where a silent line gave 22).
    constexpr int rate = 16000;
    const std::size_t before = 6 * rate, n = 10 * rate;
    const auto nearEnd = test::colouredNoise(n, 61, 0.3);
    const auto line = test::whiteNoise(n, 62, 1e-4);
    const auto farSpeech = test::colouredNoise(n, 63, 0.1);
    const auto noise = test::whiteNoise(n, 64, 5.6e-4);
    auto room = test::randomSystem(3200, 65, 3200.0 / 6.9);
    room[0] += 1.0;
    auto reduction = [&](bool lineNoise) {
        std::vector<double> far(n, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            const bool burst = (i / 8000) % 3 != 2;   // 0.5 s on, 0.5 s on, 0.5 s off
            far[i] = i < before ? (lineNoise ? line[i] : 0.0) : (burst ? farSpeech[i] : 0.0);
        }
        const auto echo = test::convolve(std::span<const double>(far), std::span<const double>(room));
        std::vector<float> mic(n), ref(n);
        for (std::size_t i = 0; i < n; ++i) {
            const bool talking = i < before && (i / 8000) % 2 == 0;
            mic[i] = static_cast<float>(0.3 * echo[i] + (talking ? nearEnd[i] : 0.0) + noise[i]);
            ref[i] = static_cast<float>(far[i]);
        }
        aec::EchoCanceller aec;
        aec.prepare(test::cpuKalman(4096), {.maximumBlockSize = 160});
        const auto out = test::cancelWhole(aec, mic, ref, 160);
        const std::size_t L = static_cast<std::size_t>(aec.latencySamples()), span = n - before - L;
        return test::reductionDb(std::span<const float>(mic).subspan(before, span), std::span<const float>(out).subspan(before + L, span));
    };
    const double silentLine = reduction(false), noisyLine = reduction(true);
    INFO("echo reduction after the far end starts: line silent before " << silentLine << " dB, line noise before " << noisyLine << " dB");
    CHECK(silentLine > 20.0);
    CHECK(noisyLine > silentLine - 3.0);
}
