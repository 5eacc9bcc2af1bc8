// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The far end and microphone that the CPU filters' benchmarks run on: coloured noise and its echo
// through a short decaying path. A filter's work does not depend on the content, but its adaptation
// must run (an active far end).
#include <cstddef>
#include <random>
#include <vector>

namespace quell::bench {

struct ColouredEcho {
    std::vector<float> x, d;
};

inline ColouredEcho colouredEcho(std::size_t n, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.0f, 0.1f);
    ColouredEcho c{std::vector<float>(n), std::vector<float>(n)};
    float y1 = 0.0f;
    for (auto& v : c.x)
        v = y1 = 0.9f * y1 + g(rng);
    for (std::size_t i = 0; i < n; ++i)
        c.d[i] = 0.5f * c.x[i] + (i >= 40 ? 0.3f * c.x[i - 40] : 0.0f) + 1e-4f * g(rng);
    return c;
}

} // namespace quell::bench
