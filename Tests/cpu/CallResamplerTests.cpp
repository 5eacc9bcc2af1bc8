// SPDX-License-Identifier: GPL-3.0-or-later
// engine::CallResampler: with a canceller that passes its microphone through, the output is the input
// band-limited to 8 kHz and in time (its delay taken out), the same whatever the sizes pushed, never
// ahead of the input, and exactly as long once the delay is flushed.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "engine/CallResampler.h"
#include "support/Signals.h"

using namespace quell;

namespace {

// A 440 Hz tone on the microphone and its double on a second channel, pushed in blocks drawn from
// `sizes`; the "canceller" returns its microphone blocks. The outputs, flushed to the input's length.
std::vector<std::vector<float>> passThrough(int rate, std::size_t frames, std::uint32_t seed, std::size_t largest)
{
    engine::CallResampler r;
    r.prepare(rate, 16000, 2, 1, 160, 0);
    std::vector<float> mic(frames), mic2(frames), far(frames, 0.0f);
    for (std::size_t i = 0; i < frames; ++i) {
        mic[i] = static_cast<float>(0.5 * std::sin(2.0 * M_PI * 440.0 * static_cast<double>(i) / rate));
        mic2[i] = 2.0f * mic[i];
    }
    std::vector<std::vector<float>> out(2);
    std::mt19937 rng(seed);
    auto run = [&] {
        while (r.hasBlock()) {
            const float* blocks[2] = {r.micBlock(0), r.micBlock(1)};
            r.popBlock(blocks);
        }
        const std::size_t n = r.outputReady();
        for (int c = 0; c < 2; ++c)
            out[static_cast<std::size_t>(c)].insert(out[static_cast<std::size_t>(c)].end(), r.output(c).begin(), r.output(c).end());
        r.consumeOutput(n);
    };
    for (std::size_t pos = 0; pos < frames;) {
        const std::size_t n = std::min(std::uniform_int_distribution<std::size_t>(1, largest)(rng), frames - pos);
        const std::span<const float> m[2] = {std::span<const float>(mic).subspan(pos, n), std::span<const float>(mic2).subspan(pos, n)};
        const std::span<const float> f[1] = {std::span<const float>(far).subspan(pos, n)};
        r.push(m, f);
        pos += n;
        run();
        REQUIRE(r.outputFrames() <= pos);
    }
    while (!r.outputComplete()) {
        r.pushSilence(512);
        run();
    }
    CHECK(r.outputFrames() == frames);
    CHECK(r.inputFrames() == frames);
    return out;
}

} // namespace

TEST_CASE("Call resampler: in time, split-invariant, never ahead, exactly as long", "[engine][resampler]")
{
    for (const int rate : {16000, 44100, 48000}) {
        INFO(rate << " Hz");
        const std::size_t frames = static_cast<std::size_t>(rate);   // 1 s
        const auto a = passThrough(rate, frames, 1, 7), b = passThrough(rate, frames, 2, 3000);
        REQUIRE(a[0].size() == frames);
        CHECK(a == b);
        // The tone comes back where it went in: past the filters' start, within 1 % of full scale.
        double worst = 0.0;
        for (std::size_t i = frames / 10; i < frames - frames / 10; ++i) {
            const double want = 0.5 * std::sin(2.0 * M_PI * 440.0 * static_cast<double>(i) / rate);
            worst = std::max({worst, std::fabs(a[0][i] - want), std::fabs(a[1][i] - 2.0 * want) / 2.0});
        }
        INFO("largest error " << worst);
        CHECK(worst < 0.01);
    }
    engine::CallResampler r;
    CHECK_THROWS_AS(r.prepare(4000, 16000, 1, 1, 160, 0), std::invalid_argument);
    CHECK_THROWS_AS(r.prepare(48000, 16000, 1, 3, 160, 0), std::invalid_argument);
}
