// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A prepared EchoCanceller over whole signals, block by block as a front end feeds it (the last block
// may be shorter): the canceller-level tests' common loop.
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "aec/EchoCanceller.h"

namespace quell::test {

inline std::vector<float> cancelWhole(aec::EchoCanceller& canceller, std::span<const float> mic, std::span<const float> ref,
                                      std::size_t block)
{
    std::vector<float> out(mic.size());
    for (std::size_t p = 0; p < mic.size(); p += block) {
        const std::size_t n = std::min(block, mic.size() - p);
        canceller.process(mic.subspan(p, n), ref.subspan(p, n), std::span<float>(out).subspan(p, n));
    }
    return out;
}

// The CPU Kalman filter at `taps`, every other setting at its default.
inline aec::EchoCancellerSettings cpuKalman(int taps)
{
    aec::EchoCancellerSettings s;
    s.taps = taps;
    s.backend = aec::Backend::Cpu;
    s.filter = aec::FilterKind::Kalman;
    return s;
}

} // namespace quell::test
