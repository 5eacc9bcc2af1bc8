// SPDX-License-Identifier: GPL-3.0-or-later
#include <catch2/catch.hpp>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <vector>

#include "dsp/DelayLine.h"
#include "support/RealtimeProbe.h"

using namespace quell;

namespace {

// Two channels of distinct random signals, planar.
std::vector<std::vector<float>> randomChannels(std::size_t channels, std::size_t n, unsigned seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<std::vector<float>> x(channels, std::vector<float>(n));
    for (auto& channel : x)
        for (float& v : channel)
            v = u(rng);
    return x;
}

// The naive z^-D: zeros before the signal.
float delayed(const std::vector<float>& x, std::size_t i, std::size_t delay)
{
    return i >= delay ? x[i - delay] : 0.0f;
}

} // namespace

TEST_CASE("Delay line delays every channel by whole samples, in any split of blocks", "[dsp][delay]")
{
    const std::size_t n = 1009;
    const auto x = randomChannels(2, n, 7);
    for (const int delay : {0, 1, 37, 480}) {
        dsp::DelayLine line;
        line.prepare(2, delay);
        std::vector<std::vector<float>> y(2, std::vector<float>(n));
        // Blocks of odd sizes, one of them longer than the delay, one of a single sample.
        const std::size_t blocks[] = {1, 13, 500, 3, 491, 1};
        std::size_t at = 0;
        for (const std::size_t b : blocks) {
            const float* in[2] = {&x[0][at], &x[1][at]};
            float* out[2] = {&y[0][at], &y[1][at]};
            line.process(in, out, 2, b, static_cast<std::size_t>(delay));
            at += b;
        }
        REQUIRE(at == n);
        for (std::size_t c = 0; c < 2; ++c)
            for (std::size_t i = 0; i < n; ++i)
                REQUIRE(y[c][i] == delayed(x[c], i, static_cast<std::size_t>(delay)));
    }
}

TEST_CASE("Delay line delays in place and reads any delay up to its maximum per sample", "[dsp][delay]")
{
    const std::size_t n = 300;
    const auto x = randomChannels(1, n, 11);
    dsp::DelayLine line;
    line.prepare(1, 64);
    CHECK(line.maxDelay() == 64);
    CHECK(line.length() == 65);

    std::vector<float> buffer = x[0];   // in place: out aliases in
    const float* in[1] = {buffer.data()};
    float* out[1] = {buffer.data()};
    line.process(in, out, 1, n, 64);
    for (std::size_t i = 0; i < n; ++i)
        REQUIRE(buffer[i] == delayed(x[0], i, 64));

    // Per sample, a delay that moves from 0 to the maximum and back; the ring's raw view agrees.
    line.reset();
    for (std::size_t i = 0; i < n; ++i) {
        line.write(0, x[0][i]);
        const std::size_t delay = i % 130 < 65 ? i % 130 : 129 - i % 130;
        REQUIRE(line.read(0, delay) == delayed(x[0], i, delay));
        REQUIRE(line.ring(0)[line.newest()] == x[0][i]);
        line.advance();
    }
}

TEST_CASE("Delay line starts from silence after reset, checks its sizes and never allocates after prepare",
          "[dsp][delay][realtime]")
{
    dsp::DelayLine line;
    CHECK_THROWS_AS(line.prepare(-1, 4), std::invalid_argument);
    CHECK_THROWS_AS(line.prepare(1, -4), std::invalid_argument);

    line.prepare(2, 8);
    std::vector<float> a(32, 1.0f), b(32, -1.0f), ya(32), yb(32);
    const float* in[2] = {a.data(), b.data()};
    float* out[2] = {ya.data(), yb.data()};
    {
        test::RealtimeProbe probe;
        line.process(in, out, 2, 32, 8);
        line.reset();
        line.process(in, out, 2, 32, 8);
    }
    CHECK(test::realtimeViolations().allocations == 0);
    for (std::size_t i = 0; i < 32; ++i) {
        REQUIRE(ya[i] == (i < 8 ? 0.0f : 1.0f));
        REQUIRE(yb[i] == (i < 8 ? 0.0f : -1.0f));
    }
}
