// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FractionalDelayReader.h"

#include <cmath>
#include <numbers>

namespace quell::aec {

FractionalDelayReader::FractionalDelayReader() : table_(static_cast<std::size_t>(kFractions) * 2 * kHalfLength)
{
    // Row f interpolates x at (i + f / kFractions) from x[i - kHalfLength + 1 .. i + kHalfLength].
    for (int f = 0; f < kFractions; ++f) {
        const double frac = static_cast<double>(f) / kFractions;
        for (int j = 0; j < 2 * kHalfLength; ++j) {
            const double t = frac - (j - kHalfLength + 1);
            const double sinc = t == 0.0 ? 1.0 : std::sin(std::numbers::pi * t) / (std::numbers::pi * t);
            const double window = std::fabs(t) >= kHalfLength ? 0.0 : 0.5 + 0.5 * std::cos(std::numbers::pi * t / kHalfLength);
            table_[static_cast<std::size_t>(f * 2 * kHalfLength + j)] = static_cast<float>(sinc * window);
        }
    }
}

float FractionalDelayReader::read(const float* ring, std::size_t length, std::size_t newest, double delay) const
{
    // Position (from the oldest end of time) newest - delay = i + frac, i whole.
    const double whole = std::floor(delay);
    double frac = whole - delay + 1.0;   // in (0, 1]: the position lies frac after sample newest - whole - 1
    std::size_t i = (newest + length - static_cast<std::size_t>(whole) - 1) % length;
    int f = static_cast<int>(std::lround(frac * kFractions));
    if (f >= kFractions) {   // a whole-number delay: exactly the sample
        f = 0;
        i = (i + 1) % length;
    }
    const float* c = &table_[static_cast<std::size_t>(f * 2 * kHalfLength)];
    float acc = 0.0f;
    std::size_t k = (i + length - (kHalfLength - 1)) % length;
    for (int j = 0; j < 2 * kHalfLength; ++j) {
        acc += c[j] * ring[k];
        k = k + 1 == length ? 0 : k + 1;
    }
    return acc;
}

} // namespace quell::aec
