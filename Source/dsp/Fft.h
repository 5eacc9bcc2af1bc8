// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A radix-2 complex FFT plan: twiddles and the bit-reversal order computed once at construction, so a
// transform allocates nothing (the residual echo suppressor runs it on the real-time thread). Sizes are
// small there (128 to 1024 points), where a plain iterative radix-2 is within a small factor of a tuned
// library and keeps the project free of an FFT dependency.
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

private:
    std::size_t size_ = 0;
    std::vector<std::complex<T>> twiddles_;   // exp(-2 pi i k / size), k < size / 2
    std::vector<std::size_t> swaps_;          // index pairs (i, j), i < j, of the bit-reversal permutation
};

extern template class FftPlan<float>;
extern template class FftPlan<double>;

} // namespace quell::dsp
