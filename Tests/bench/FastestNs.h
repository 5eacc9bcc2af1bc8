// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The fastest of `repeats` timings of `runs` calls of fn, per call, in ns: the least disturbed run is the
// closest to what the code costs (the others carry the host's interruptions).
#include <algorithm>
#include <chrono>

namespace quell::bench {

template <typename Fn>
double fastestNs(int repeats, int runs, Fn&& fn)
{
    double best = 1e300;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < runs; ++i)
            fn();
        best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / runs);
    }
    return best;
}

} // namespace quell::bench
