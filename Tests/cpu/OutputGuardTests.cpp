// SPDX-License-Identifier: GPL-3.0-or-later
// OutputGuard: a linear output that is no louder than the microphone passes bit for bit; one that is
// louder (a burst, or a quietly worse output over tens of milliseconds) is replaced by the microphone,
// crossfaded, and counted; the guard lets go once the output is well below the microphone again.
#include <catch2/catch.hpp>

#include <cmath>

#include "aec/OutputGuard.h"
#include "support/Signals.h"

using namespace quell;

namespace {

double powerOf(std::span<const float> x)
{
    double p = 0.0;
    for (const float v : x)
        p += double(v) * v;
    return p / static_cast<double>(x.size());
}

} // namespace

TEST_CASE("The output guard passes an output quieter than the microphone untouched", "[aec][guard]")
{
    const auto micd = test::whiteNoise(16000, 1, 0.1), errd = test::whiteNoise(16000, 2, 0.01);
    std::vector<float> mic(micd.begin(), micd.end()), out(errd.begin(), errd.end());
    const std::vector<float> original = out;
    aec::OutputGuard g;
    g.prepare({}, {.sampleRate = 16000});
    for (std::size_t pos = 0; pos < mic.size(); pos += 111) {
        const std::size_t n = std::min<std::size_t>(111, mic.size() - pos);
        g.process(std::span(mic).subspan(pos, n), std::span(out).subspan(pos, n));
    }
    CHECK(out == original);
    CHECK(g.fallbackSamples() == 0);
}

TEST_CASE("The output guard plays the microphone while the output is louder, then lets go", "[aec][guard]")
{
    const int rate = 16000;
    const auto micd = test::whiteNoise(3 * rate, 3, 0.05), loud = test::whiteNoise(3 * rate, 4, 0.5),
               good = test::whiteNoise(3 * rate, 5, 0.001);
    std::vector<float> mic(micd.begin(), micd.end()), out(mic.size());
    // 0-1 s: a good output; 1-1.5 s: a diverged one 20 dB over the microphone; 1.5-2 s: 0.8 dB over it
    // (a stale filter); then good again.
    for (std::size_t i = 0; i < out.size(); ++i) {
        const double t = static_cast<double>(i) / rate;
        out[i] = static_cast<float>(t < 1.0 || t >= 2.0 ? good[i] : t < 1.5 ? loud[i] : 1.1 * micd[i] + good[i]);
    }
    aec::OutputGuard g;
    g.prepare({}, {.sampleRate = rate});
    std::vector<float> guarded = out;
    g.process(mic, guarded);
    auto window = [&](const std::vector<float>& v, double from, double to) {
        return std::span<const float>(v).subspan(static_cast<std::size_t>(from * rate), static_cast<std::size_t>((to - from) * rate));
    };
    // The diverged part: after at most a few milliseconds, the microphone itself.
    const double micPower = powerOf(window(mic, 1.0, 1.5));
    CHECK(powerOf(window(guarded, 1.0, 1.5)) < 1.26 * micPower);   // the whole half second: under +1 dB
    for (std::size_t i = static_cast<std::size_t>(1.01 * rate); i < static_cast<std::size_t>(1.5 * rate); ++i)
        REQUIRE(guarded[i] == mic[i]);
    // The quietly louder part is caught by the long detector: never more than 1 dB over the microphone.
    CHECK(powerOf(window(guarded, 1.6, 2.0)) < 1.12 * powerOf(window(mic, 1.6, 2.0)));
    // Good again: released within 30 ms, and from then on untouched.
    for (std::size_t i = static_cast<std::size_t>(2.03 * rate); i < guarded.size(); ++i)
        REQUIRE(guarded[i] == out[i]);
    CHECK(g.fallbackSamples() > rate);
    CHECK(g.fallbackSamples() < rate + rate / 10);
}

TEST_CASE("The output guard lets go at once when the far end resumes after a pause", "[aec][guard]")
{
    // 0-0.5 s: a far-end pause; the microphone hears the room's noise and the output is a little louder
    // (the filter adds its own faint noise): the guard plays the microphone. Then the echo starts, 40 dB
    // over the noise, and the filter cancels it: the output must be the filter's within the crossfade
    // (2 ms), not the microphone's echo for the hold time.
    const int rate = 16000;
    const auto noise = test::whiteNoise(rate, 6, 0.001), echo = test::whiteNoise(rate, 7, 0.1),
               residual = test::whiteNoise(rate, 8, 0.001);
    std::vector<float> mic(rate), out(rate);
    for (std::size_t i = 0; i < mic.size(); ++i) {
        const bool pause = i < static_cast<std::size_t>(rate / 2);
        mic[i] = static_cast<float>(noise[i] + (pause ? 0.0 : echo[i]));
        out[i] = static_cast<float>(pause ? 1.2 * noise[i] : noise[i] + residual[i]);
    }
    aec::OutputGuard g;
    g.prepare({}, {.sampleRate = rate});
    std::vector<float> guarded = out;
    for (std::size_t pos = 0; pos < mic.size(); pos += 64)
        g.process(std::span(mic).subspan(pos, 64), std::span(guarded).subspan(pos, 64));
    CHECK(g.fallbackSamples() > rate / 4);   // the pause was the microphone's
    const std::size_t released = static_cast<std::size_t>(0.5 * rate + 0.0025 * rate);
    for (std::size_t i = released; i < guarded.size(); ++i)
        REQUIRE(guarded[i] == out[i]);
}

TEST_CASE("The output guard passes a near end that the echo had partly cancelled in the air", "[aec][guard]")
{
    // Double talk with a filter that cancels perfectly: the output is the near end, the microphone the near
    // end plus the echo. Where the echo is partly opposite to the near end for 20 ms, the microphone is
    // 3.5 dB quieter than the output (the corpus's stereo double talk had two such moments, 3 to 4 dB).
    // Nothing was added: the output must pass. The 3 dB threshold the guard had before plays the
    // microphone's echo there, which this test also shows.
    const int rate = 16000;
    const auto near = test::whiteNoise(rate, 9, 0.1), echo = test::whiteNoise(rate, 10, 0.1), other = test::whiteNoise(rate, 11, 0.1);
    std::vector<float> mic(rate), out(rate);
    for (std::size_t i = 0; i < mic.size(); ++i) {
        const std::size_t at = i % 4000;   // every 250 ms, 20 ms of echo that is -0.5 x the near end plus 0.44 x another signal
        const bool opposite = at >= 2000 && at < 2320;
        mic[i] = static_cast<float>(near[i] + (opposite ? -0.5 * near[i] + 0.444 * other[i] : echo[i]));
        out[i] = static_cast<float>(near[i]);
    }
    const double excessDb = 10.0 * std::log10(powerOf(std::span<const float>(out).subspan(2000, 320))
                                              / powerOf(std::span<const float>(mic).subspan(2000, 320)));
    REQUIRE(excessDb > 3.0);
    REQUIRE(excessDb < 4.0);
    auto guarded = [&](const aec::OutputGuardSettings& s) {
        aec::OutputGuard g;
        g.prepare(s, {.sampleRate = rate});
        std::vector<float> o = out;
        for (std::size_t pos = 0; pos < mic.size(); pos += 64)
            g.process(std::span(mic).subspan(pos, 64), std::span(o).subspan(pos, 64));
        return std::make_pair(o, g.fallbackSamples());
    };
    const auto [passed, fellBack] = guarded({});
    CHECK(fellBack == 0);
    CHECK(passed == out);
    aec::OutputGuardSettings before;
    before.shortDb = 3.0;
    CHECK(guarded(before).second > 0);
}

TEST_CASE("The output guard refuses bad settings", "[aec][guard]")
{
    aec::OutputGuard g;
    aec::OutputGuardSettings s;
    s.shortSeconds = 0.0;
    CHECK_THROWS_AS(g.prepare(s, {.sampleRate = 16000}), std::invalid_argument);
    CHECK_THROWS_AS(g.prepare({}, {.sampleRate = 0}), std::invalid_argument);
    g.prepare({}, {.sampleRate = 16000});
    std::vector<float> a(10), b(9);
    CHECK_THROWS_AS(g.process(a, b), std::invalid_argument);
}
