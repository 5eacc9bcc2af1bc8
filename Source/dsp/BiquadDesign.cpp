// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/BiquadCascade.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace quell::dsp {

Biquad butterworthHighPass(double cutoffHz, double sampleRate)
{
    if (!(cutoffHz > 0.0) || !(cutoffHz < 0.5 * sampleRate))
        throw std::invalid_argument("butterworthHighPass: cutoff must lie between 0 and Nyquist");
    // Bilinear transform with pre-warping; Q = 1/sqrt(2).
    const double k = std::tan(std::numbers::pi * cutoffHz / sampleRate);
    const double q = std::numbers::sqrt2 / 2.0;
    const double norm = 1.0 / (1.0 + k / q + k * k);
    Biquad s{};
    s.b0 = norm;
    s.b1 = -2.0 * norm;
    s.b2 = norm;
    s.a1 = 2.0 * (k * k - 1.0) * norm;
    s.a2 = (1.0 - k / q + k * k) * norm;
    return s;
}

} // namespace quell::dsp
