// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/Fft.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

namespace quell::dsp {

template <typename T>
FftPlan<T>::FftPlan(std::size_t size) : size_(size)
{
    if (size == 0 || (size & (size - 1)) != 0)
        throw std::invalid_argument("FFT size must be a power of two (got " + std::to_string(size) + ")");
    // Each twiddle from std::polar in double, not by repeated rotation, so rounding does not accumulate
    // along a stage.
    twiddles_.resize(size / 2);
    for (std::size_t k = 0; k < size / 2; ++k) {
        const std::complex<double> w = std::polar(1.0, -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(size));
        twiddles_[k] = {static_cast<T>(w.real()), static_cast<T>(w.imag())};
    }
    for (std::size_t i = 1, j = 0; i < size; ++i) {
        std::size_t bit = size >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            swaps_.push_back(i);
            swaps_.push_back(j);
        }
    }
}

template <typename T>
void FftPlan<T>::transform(std::span<std::complex<T>> a, bool inverse) const
{
    if (a.size() != size_)
        throw std::invalid_argument("FftPlan::transform: " + std::to_string(a.size()) + " points for a plan of "
                                    + std::to_string(size_));
    for (std::size_t s = 0; s < swaps_.size(); s += 2)
        std::swap(a[swaps_[s]], a[swaps_[s + 1]]);
    for (std::size_t len = 2; len <= size_; len <<= 1) {
        const std::size_t half = len / 2, stride = size_ / len;
        for (std::size_t start = 0; start < size_; start += len)
            for (std::size_t k = 0; k < half; ++k) {
                const std::complex<T> w = inverse ? std::conj(twiddles_[k * stride]) : twiddles_[k * stride];
                const std::complex<T> u = a[start + k];
                const std::complex<T> v = a[start + k + half] * w;
                a[start + k] = u + v;
                a[start + k + half] = u - v;
            }
    }
    if (inverse) {
        const T scale = T(1) / static_cast<T>(size_);
        for (auto& v : a)
            v *= scale;
    }
}

template class FftPlan<float>;
template class FftPlan<double>;

} // namespace quell::dsp
