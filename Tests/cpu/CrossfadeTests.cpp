// SPDX-License-Identifier: GPL-3.0-or-later
// dsp::Crossfade against a naive per-sample reference: whole blocks and odd splits, two channels on one
// ramp, output written over an input, a ramp turned back before its end.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "dsp/Crossfade.h"
#include "support/Signals.h"

using namespace quell;

namespace {

// The ramp written out sample by sample: the position moves by 1/ramp toward the target, then
// a + m (b - a).
std::vector<float> naive(const std::vector<float>& a, const std::vector<float>& b, float start, double ramp,
                         const std::vector<float>& target)
{
    std::vector<float> out(a.size());
    float m = start;
    const auto step = static_cast<float>(1.0 / ramp);
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (m != target[i])
            m = target[i] > m ? std::min(target[i], m + step) : std::max(target[i], m - step);
        out[i] = m == 0.0f ? a[i] : m == 1.0f ? b[i] : a[i] + m * (b[i] - a[i]);
    }
    return out;
}

std::vector<float> noise(std::size_t n, std::uint32_t seed)
{
    const auto d = test::whiteNoise(n, seed);
    return {d.begin(), d.end()};
}

} // namespace

TEST_CASE("Crossfade follows its naive twin over odd block splits, on two channels, in place", "[dsp][crossfade]")
{
    const std::size_t n = 1000;
    const auto a0 = noise(n, 1), b0 = noise(n, 2), a1 = noise(n, 3), b1 = noise(n, 4);
    // To 1 at 100, back to 0 at 400 and again up at 450 (that ramp of 128 turned back unfinished), and
    // to 1 at 700.
    std::vector<float> target(n, 0.0f);
    std::fill(target.begin() + 100, target.begin() + 400, 1.0f);
    std::fill(target.begin() + 450, target.begin() + 500, 1.0f);
    std::fill(target.begin() + 700, target.end(), 1.0f);
    const auto want0 = naive(a0, b0, 0.0f, 128.0, target), want1 = naive(a1, b1, 0.0f, 128.0, target);
    CHECK(want0[420] != a0[420]);   // the turned-back ramp has not reached 0 there
    CHECK(want0[460] != b0[460]);

    for (const std::size_t block : {std::size_t{1}, std::size_t{7}, std::size_t{128}, std::size_t{333}, n}) {
        dsp::Crossfade fade;
        fade.prepare(128.0, 0.0f);
        std::vector<float> out0(n), inPlace1 = a1;   // channel 1's output is written over its first input
        for (std::size_t p = 0; p < n;) {
            // A block does not span a change of target: the front ends read it once per block.
            std::size_t k = std::min(block, n - p);
            for (std::size_t i = 1; i < k; ++i)
                if (target[p + i] != target[p]) {
                    k = i;
                    break;
                }
            const float* a[2] = {a0.data() + p, inPlace1.data() + p};
            const float* b[2] = {b0.data() + p, b1.data() + p};
            float* out[2] = {out0.data() + p, inPlace1.data() + p};
            fade.process(a, b, out, 2, k, target[p]);
            p += k;
        }
        INFO("block " << block);
        CHECK(out0 == want0);
        CHECK(inPlace1 == want1);
        CHECK(fade.position() == 1.0f);
    }
}
