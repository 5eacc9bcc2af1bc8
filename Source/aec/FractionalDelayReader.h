// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reads a ring of samples at a fractional delay: a 16-tap Hann-windowed sinc, its coefficients from a
// table of 2048 fractions (the nearest is taken: 0.00025 samples of timing error at most, below -65 dB
// of error at 4 kHz and 16 kHz). Used by the echo canceller to move the far end by a fraction of a sample
// every sample when it compensates clock drift (ClockDriftTracker).
//
// At a whole-number delay the result is exactly the delayed sample.
// Threading: const after construction; no allocation in read().
#include <cstddef>
#include <vector>

namespace quell::aec {

class FractionalDelayReader {
public:
    static constexpr int kHalfLength = 8;   // taps on each side; delays below this cannot be read
    FractionalDelayReader();
    // ring[0..length) with the newest sample at `newest`; delay in [kHalfLength, length - kHalfLength - 1].
    float read(const float* ring, std::size_t length, std::size_t newest, double delay) const;

private:
    static constexpr int kFractions = 2048;
    std::vector<float> table_;   // [fraction][2 * kHalfLength]
};

} // namespace quell::aec
