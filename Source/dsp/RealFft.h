// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The FFT of a real signal of N points through a complex FFT of N/2: the even and odd samples as the
// real and imaginary parts of one complex sequence, its transform split into theirs and joined with one
// twiddle per bin. Only bins 0..N/2 are kept (the rest are their conjugates), so a filter working per
// bin also halves its work. Allocation-free after construction, like FftPlan.
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

#include "dsp/Fft.h"

namespace quell::dsp {

template <typename T>
class RealFftPlan {
public:
    // size: a power of two >= 2; throws std::invalid_argument otherwise.
    explicit RealFftPlan(std::size_t size);
    std::size_t size() const { return 2 * half_.size(); }
    std::size_t bins() const { return half_.size() + 1; }
    // in: size() samples; out: bins() values, X[k] = sum_n in[n] exp(-2 pi i k n / size).
    void forward(std::span<const T> in, std::span<std::complex<T>> out) const;
    // in: bins() values of a real signal's spectrum (the imaginary parts of bins 0 and size()/2 are
    // ignored); out: size() samples, scaled by 1/size(), so forward then inverse gives the signal back.
    // in and out must not overlap.
    void inverse(std::span<const std::complex<T>> in, std::span<T> out) const;

private:
    FftPlan<T> half_;
    std::vector<std::complex<T>> twiddles_;   // exp(-2 pi i k / size), k <= size / 4
};

extern template class RealFftPlan<float>;
extern template class RealFftPlan<double>;

} // namespace quell::dsp
