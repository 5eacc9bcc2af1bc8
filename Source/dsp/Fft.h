// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A radix-2 complex FFT plan: twiddles (one table per stage, in the order a stage reads them, forward and
// inverse) and the bit-reversal order computed once at construction, so a transform allocates nothing
// (the residual echo suppressor and the CPU Kalman filter run it on the real-time thread). Sizes are
// small there (128 to 1024 points), where an iterative radix-2 whose butterflies are written out in real
// arithmetic is within a small factor of a tuned library and keeps the project free of an FFT
// dependency. (std::complex's operator* checks every product for NaN and infinity and calls a library
// routine to redo it: in the butterflies that cost the Kalman filter 6x.)
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

namespace quell::dsp {

template <typename T>
class FftPlan {
public:
    // size: a power of two >= 1; throws std::invalid_argument otherwise.
    explicit FftPlan(std::size_t size);
    std::size_t size() const { return size_; }
    // In place; data.size() must equal size(). The inverse is scaled by 1/size.
    void transform(std::span<std::complex<T>> data, bool inverse) const;
    // The same on size() complex values stored as (real, imaginary) pairs; unscaled (the inverse's
    // 1/size is the caller's), with no size check: for transforms built on this one (RealFftPlan).
    void transformPairs(T* data, bool inverse) const;

private:
    std::size_t size_ = 0;
    // Stage by stage from the 8-point stage on (the 2- and 4-point stages need none): the half-length
    // h's twiddles exp(-+2 pi i k / 2h), k < h, as (real, imaginary) pairs.
    std::vector<T> forward_, inverse_;
    std::vector<std::size_t> swaps_;          // index pairs (i, j), i < j, of the bit-reversal permutation
};

extern template class FftPlan<float>;
extern template class FftPlan<double>;

} // namespace quell::dsp
