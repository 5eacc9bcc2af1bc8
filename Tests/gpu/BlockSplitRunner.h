// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Streaming check shared by the [gpu] filter tests: feeds packed planar channels (channel c at
// [c * n, (c + 1) * n)) to a processor with process(span in, span out) in random block sizes (some of 1-3
// samples), output blocks NaN-poisoned, and reassembles the packed output.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

namespace quell::test {

template <class Processor>
std::vector<float> runInRandomBlocks(Processor& proc, const std::vector<float>& x, int channels, std::size_t n,
                                     std::uint32_t seed, std::size_t maxBlock)
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::mt19937 rng(seed);
    std::vector<float> y(x.size(), nan);
    std::size_t pos = 0;
    while (pos < n) {
        std::size_t len = std::uniform_int_distribution<std::size_t>(1, std::max<std::size_t>(maxBlock, 1))(rng);
        if (rng() % 5 == 0)
            len = 1 + rng() % 3;
        len = std::min(len, n - pos);
        std::vector<float> in(static_cast<std::size_t>(channels) * len), out(in.size(), nan);
        for (int c = 0; c < channels; ++c)
            std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(c * n + pos), len, in.begin() + static_cast<std::ptrdiff_t>(c * len));
        proc.process(std::span<const float>(in), std::span<float>(out));
        for (int c = 0; c < channels; ++c)
            std::copy_n(out.begin() + static_cast<std::ptrdiff_t>(c * len), len, y.begin() + static_cast<std::ptrdiff_t>(c * n + pos));
        pos += len;
    }
    return y;
}

} // namespace quell::test
