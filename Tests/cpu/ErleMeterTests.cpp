// SPDX-License-Identifier: GPL-3.0-or-later
// ErleMeter against energies worked out by hand: frames, the far-end activity rule, the warm-up, and
// blocks of any size giving the same report.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "aec/ErleMeter.h"
#include "support/Signals.h"

using namespace quell;

namespace {

std::vector<float> scaled(const std::vector<double>& x, double gain)
{
    std::vector<float> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        y[i] = static_cast<float>(gain * x[i]);
    return y;
}

} // namespace

TEST_CASE("ErleMeter: steady ERLE is mic over output energy after the warm-up, while the far end is active", "[aec][erle]")
{
    const int rate = 16000;
    const std::size_t frame = 1600, frames = 30;   // 3 s of 100 ms frames
    const auto noise = test::whiteNoise(frame * frames, 3, 0.1);
    std::vector<float> mic = scaled(noise, 1.0), out(mic.size()), ref = scaled(noise, 1.0);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::size_t f = i / frame;
        // Output 20 dB down in the warm-up (frames 0-9), 40 dB after.
        out[i] = mic[i] * (f < 10 ? 0.1f : 0.01f);
        // Frames 20-21: far end silent (-inf); frames 22-23: 40 dB below the loudest (a pause).
        if (f == 20 || f == 21)
            ref[i] = 0.0f;
        if (f == 22 || f == 23)
            ref[i] *= 0.01f;
        // Frames 24-25: the output is the microphone (no echo removed), but the far end is silent.
        if (f == 24 || f == 25) {
            ref[i] = 0.0f;
            out[i] = mic[i];
        }
    }
    aec::ErleMeter meter(rate, 1.0, 0.1);
    meter.add(mic, out, ref);
    const aec::ErleReport r = meter.report();
    REQUIRE(r.perFrameDb.size() == frames);
    CHECK(r.perFrameDb[0].value() == Approx(20.0).margin(1e-3));
    CHECK(r.perFrameDb[15].value() == Approx(40.0).margin(1e-3));
    for (const std::size_t f : {20u, 21u, 22u, 23u, 24u, 25u})
        CHECK_FALSE(r.perFrameDb[f].has_value());
    CHECK(r.activeFrames == 30 - 10 - 6);
    REQUIRE(r.steadyStateDb.has_value());
    CHECK(*r.steadyStateDb == Approx(40.0).margin(1e-3));

    // The same signal in blocks of awkward sizes gives the same report.
    aec::ErleMeter pieces(rate, 1.0, 0.1);
    const std::size_t sizes[] = {1, 37, 160, 1601, 999};
    for (std::size_t at = 0, k = 0; at < mic.size(); ++k) {
        const std::size_t n = std::min(sizes[k % 5], mic.size() - at);
        pieces.add(std::span<const float>(mic).subspan(at, n), std::span<const float>(out).subspan(at, n),
                   std::span<const float>(ref).subspan(at, n));
        at += n;
    }
    const aec::ErleReport p = pieces.report();
    REQUIRE(p.steadyStateDb.has_value());
    CHECK(*p.steadyStateDb == Approx(*r.steadyStateDb).epsilon(1e-9));
    CHECK(p.activeFrames == r.activeFrames);
}

TEST_CASE("ErleMeter: no active far end, no figure; a partial last frame is not counted", "[aec][erle]")
{
    aec::ErleMeter meter(16000);
    const std::vector<float> mic(2400, 0.1f), out(2400, 0.01f), silent(2400, 0.0f);
    meter.add(mic, out, silent);
    const aec::ErleReport r = meter.report();
    CHECK(r.perFrameDb.size() == 1);   // 1.5 frames: the half is pending
    CHECK_FALSE(r.steadyStateDb.has_value());
    CHECK(r.activeFrames == 0);
    CHECK_THROWS_AS(aec::ErleMeter(0), std::invalid_argument);
}
