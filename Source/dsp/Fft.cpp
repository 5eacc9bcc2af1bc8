// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/Fft.h"

#include "dsp/TargetClones.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace quell::dsp {

template <typename T>
FftPlan<T>::FftPlan(std::size_t size) : size_(size)
{
    if (size == 0 || (size & (size - 1)) != 0)
        throw std::invalid_argument("FFT size must be a power of two (got " + std::to_string(size) + ")");
    // Each twiddle from std::polar in double, not by repeated rotation, so rounding does not accumulate
    // along a stage.
    for (std::size_t half = 4; half < size; half *= 2)
        for (std::size_t k = 0; k < half; ++k) {
            const std::complex<double> w = std::polar(1.0, -std::numbers::pi * static_cast<double>(k) / static_cast<double>(half));
            forward_.push_back(static_cast<T>(w.real()));
            forward_.push_back(static_cast<T>(w.imag()));
            inverse_.push_back(static_cast<T>(w.real()));
            inverse_.push_back(static_cast<T>(-w.imag()));
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

namespace {

// The twiddle-free butterfly on two complex values stored as T[2]: a + b into a, a - b into b.
template <typename T>
[[gnu::always_inline]] inline void sumAndDifference(T* a, T* b)
{
    const T ar = a[0], ai = a[1], br = b[0], bi = b[1];
    a[0] = ar + br;
    a[1] = ai + bi;
    b[0] = ar - br;
    b[1] = ai - bi;
}

template <typename T>
[[gnu::always_inline]] inline void radix2(T* d, std::size_t n, const std::size_t* swaps, std::size_t swapCount,
                                        const T* twiddles, bool inverse)
{
    for (std::size_t s = 0; s < swapCount; s += 2) {
        const std::size_t i = 2 * swaps[s], j = 2 * swaps[s + 1];
        std::swap(d[i], d[j]);
        std::swap(d[i + 1], d[j + 1]);
    }
    if (n >= 2)
        for (std::size_t i = 0; i < 2 * n; i += 4)
            sumAndDifference(d + i, d + i + 2);
    if (n >= 4) {
        // The 4-point stage's second twiddle is -i forward, +i inverse: a swap and a sign, no product.
        const T s = inverse ? T(-1) : T(1);
        for (std::size_t i = 0; i < 2 * n; i += 8) {
            sumAndDifference(d + i, d + i + 4);
            const T er = s * d[i + 7], ei = -s * d[i + 6];
            d[i + 6] = er;
            d[i + 7] = ei;
            sumAndDifference(d + i + 2, d + i + 6);
        }
    }
    for (std::size_t half = 4; half < n; half *= 2) {
        for (std::size_t start = 0; start < n; start += 2 * half) {
            T* a = d + 2 * start;
            T* b = a + 2 * half;
            for (std::size_t k = 0; k < half; ++k) {
                const T wr = twiddles[2 * k], wi = twiddles[2 * k + 1];
                const T vr = b[2 * k] * wr - b[2 * k + 1] * wi;
                const T vi = b[2 * k] * wi + b[2 * k + 1] * wr;
                const T ur = a[2 * k], ui = a[2 * k + 1];
                a[2 * k] = ur + vr;
                a[2 * k + 1] = ui + vi;
                b[2 * k] = ur - vr;
                b[2 * k + 1] = ui - vi;
            }
        }
        twiddles += 2 * half;
    }
}

// The butterflies, compiled for AVX2 beside the baseline (QUELL_CLONES): AVX2 halves the transform's
// time.

QUELL_CLONES void radix2Float(float* d, std::size_t n, const std::size_t* swaps, std::size_t swapCount, const float* twiddles,
                              bool inverse)
{
    radix2(d, n, swaps, swapCount, twiddles, inverse);
}

QUELL_CLONES void radix2Double(double* d, std::size_t n, const std::size_t* swaps, std::size_t swapCount,
                               const double* twiddles, bool inverse)
{
    radix2(d, n, swaps, swapCount, twiddles, inverse);
}

} // namespace

template <typename T>
void FftPlan<T>::transformPairs(T* d, bool inverse) const
{
    const T* twiddles = inverse ? inverse_.data() : forward_.data();
    if constexpr (std::is_same_v<T, float>)
        radix2Float(d, size_, swaps_.data(), swaps_.size(), twiddles, inverse);
    else
        radix2Double(d, size_, swaps_.data(), swaps_.size(), twiddles, inverse);
}

template <typename T>
void FftPlan<T>::transform(std::span<std::complex<T>> a, bool inverse) const
{
    if (a.size() != size_)
        throw std::invalid_argument("FftPlan::transform: " + std::to_string(a.size()) + " points for a plan of "
                                    + std::to_string(size_));
    // std::complex<T> is laid out as T[2] (the standard guarantees it).
    T* d = reinterpret_cast<T*>(a.data());
    transformPairs(d, inverse);
    if (inverse) {
        const T scale = T(1) / static_cast<T>(size_);
        for (std::size_t i = 0; i < 2 * size_; ++i)
            d[i] *= scale;
    }
}

template class FftPlan<float>;
template class FftPlan<double>;

} // namespace quell::dsp
