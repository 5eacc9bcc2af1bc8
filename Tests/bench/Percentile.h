// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The q-quantile of a bench's timings (q in [0, 1]): the sorted value at index q x count, the last for q = 1.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace quell::bench {

inline double percentile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())));
    return v[i];
}

} // namespace quell::bench
