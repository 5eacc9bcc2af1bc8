// SPDX-License-Identifier: GPL-3.0-or-later
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>

#include "engine/FallbackGain.h"

using quell::engine::FallbackGain;

namespace {

// The energy of `frames` samples of a sine at amplitude a (its mean square is a^2 / 2).
double energy(std::size_t frames, double a)
{
    return 0.5 * a * a * double(frames);
}

// Feeds `blocks` blocks of `block` samples: microphone at amplitude mic, output at amplitude out.
void feed(FallbackGain& g, int blocks, std::size_t block, double mic, double out)
{
    for (int b = 0; b < blocks; ++b)
        g.observe(energy(block, mic), energy(block, out), block);
}

} // namespace

TEST_CASE("Fallback gain is the output's level over the microphone's, never above 1", "[engine][deadline]")
{
    FallbackGain g;
    g.prepare(48000);
    CHECK(g.gain() == 1.0f);   // nothing seen yet: the microphone as it is

    feed(g, 20, 512, 0.1, 0.001);   // cancelling 40 dB
    CHECK(g.gain() == Approx(0.01).margin(1e-4));

    feed(g, 20, 512, 0.1, 0.3);     // an output louder than the microphone is never copied
    CHECK(g.gain() == 1.0f);

    feed(g, 20, 512, 0.1, 0.001);
    g.reset();                      // a new stream starts from the microphone as it is
    CHECK(g.gain() == 1.0f);

    feed(g, 20, 512, 0.0, 0.0);     // digital silence: nothing to attenuate, no division by zero
    CHECK(g.gain() == Approx(1.0).margin(1e-6));
}

TEST_CASE("Fallback gain follows a change within its averaging time, whatever the call sizes", "[engine][deadline]")
{
    const int rate = 48000;
    for (const std::size_t block : {std::size_t{64}, std::size_t{480}, std::size_t{2048}}) {
        FallbackGain g;
        g.prepare(rate);
        const std::size_t second = static_cast<std::size_t>(rate);
        feed(g, static_cast<int>(second / block), block, 0.1, 0.1);   // a near-end talker let through
        CHECK(g.gain() == Approx(1.0).margin(1e-3));
        // Far-end single talk from here, cancelled 30 dB: the energy it averaged fades, so within 10
        // averaging times (300 ms) the gain is within 1 dB of the new level, and within one short block
        // it is not (one quiet block does not make the gain jump).
        const double quiet = 0.1 * std::pow(10.0, -1.5);
        feed(g, 1, block, 0.1, quiet);
        if (double(block) < 0.5 * FallbackGain::kAveragingSeconds * rate)
            CHECK(g.gain() > 0.5f);
        const std::size_t settle = static_cast<std::size_t>(10 * FallbackGain::kAveragingSeconds * rate);
        for (std::size_t done = block; done < settle; done += block)
            feed(g, 1, block, 0.1, quiet);
        INFO("block " << block << ", gain " << g.gain());
        CHECK(20.0 * std::log10(g.gain()) == Approx(-30.0).margin(1.0));
    }
}
