// SPDX-License-Identifier: GPL-3.0-or-later
// ComfortNoise's floor: follows a falling power at once, rises at riseDbPerSecond, and only at
// riseDbPerSecondWithEcho while the far end plays (a residual echo as long as the far end's speech is no
// noise floor).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "aec/ComfortNoise.h"

using namespace quell;

TEST_CASE("Comfort noise's floor rises slowly, and slower still while the far end plays", "[aec][suppressor]")
{
    const double framesPerSecond = 250.0;
    const int bins = 5;
    aec::ComfortNoiseSettings settings;
    settings.riseDbPerSecond = 5.0;
    settings.riseDbPerSecondWithEcho = 0.5;
    settings.smoothing = 0.0;       // the floor sees each frame's power as it is
    settings.biasCompensation = 1.0;
    auto floorAfter = [&](bool echoPossible) {
        aec::ComfortNoise noise;
        noise.prepare(bins, framesPerSecond, settings);
        const std::vector<float> quiet(bins, 1e-6f), loud(bins, 1e-2f);
        noise.track(quiet);
        // Two seconds of a power 40 dB above the floor.
        for (int f = 0; f < 2 * static_cast<int>(framesPerSecond); ++f)
            noise.track(loud, echoPossible);
        return 10.0 * std::log10(noise.floor()[2] / 1e-6);
    };
    const double rise = floorAfter(false), riseWithEcho = floorAfter(true);
    INFO("rise over 2 s: " << rise << " dB, with the far end playing " << riseWithEcho << " dB");
    CHECK(rise == Approx(10.0).margin(0.05));
    CHECK(riseWithEcho == Approx(1.0).margin(0.05));

    // Down at once.
    aec::ComfortNoise noise;
    noise.prepare(bins, framesPerSecond, settings);
    noise.track(std::vector<float>(bins, 1e-2f));
    noise.track(std::vector<float>(bins, 1e-5f), true);
    CHECK(noise.floor()[0] == Approx(1e-5f));

    settings.riseDbPerSecondWithEcho = 6.0;   // faster with echo than without: refused
    CHECK_THROWS_AS(noise.prepare(bins, framesPerSecond, settings), std::invalid_argument);
}

TEST_CASE("Comfort noise's floor comes back after digital silence", "[aec][suppressor]")
{
    // A stream that starts with digital silence (a plugin before the transport runs, a muted microphone)
    // or passes through a second of it: the floor fell to zero (or to what flush-to-zero and rounding
    // leave), and a rise by a factor never lifted it again. It restarts from the power it sees.
    const int bins = 3;
    aec::ComfortNoiseSettings settings;
    settings.smoothing = 0.0;
    settings.biasCompensation = 1.0;
    aec::ComfortNoise noise;
    noise.prepare(bins, 250.0, settings);
    for (int f = 0; f < 250; ++f)
        noise.track(std::vector<float>(bins, 0.0f));
    CHECK(noise.floor()[1] == 0.0f);
    noise.track(std::vector<float>(bins, 1e-6f));
    CHECK(noise.floor()[1] == Approx(1e-6f));
    // A floor left at a subnormal power by a fade into silence: the same.
    noise.track(std::vector<float>(bins, 1e-44f));
    noise.track(std::vector<float>(bins, 1e-6f));
    CHECK(noise.floor()[1] == Approx(1e-6f));
}
