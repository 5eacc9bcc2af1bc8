// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Direct-form FIR filter: y[n] = sum_k h[k] x[n-k], state carried across calls.
// Threading: one thread at a time; process() never allocates after prepare().
#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

namespace quell::dsp {

template <typename T>
class Fir {
public:
    void prepare(std::span<const T> taps)
    {
        if (taps.empty())
            throw std::invalid_argument("Fir: at least one tap is required");
        reversed_.assign(taps.rbegin(), taps.rend());
        // Twice the length so the newest len samples are always contiguous (no wrap in the inner loop).
        line_.assign(2 * taps.size(), T(0));
        pos_ = 0;
    }

    void reset() { std::fill(line_.begin(), line_.end(), T(0)); pos_ = 0; }

    // in and out may alias.
    void process(std::span<const T> in, std::span<T> out)
    {
        if (out.size() < in.size())
            throw std::invalid_argument("Fir: output shorter than input");
        const std::size_t len = reversed_.size();
        for (std::size_t n = 0; n < in.size(); ++n) {
            line_[pos_] = in[n];
            line_[pos_ + len] = in[n];
            // Window [pos_+1, pos_+len] holds x[n-len+1] .. x[n] in time order.
            const T* x = &line_[pos_ + 1];
            T acc = T(0);
            for (std::size_t k = 0; k < len; ++k)
                acc += reversed_[k] * x[k];
            out[n] = acc;
            pos_ = (pos_ + 1 == len) ? 0 : pos_ + 1;
        }
    }

    std::size_t length() const { return reversed_.size(); }

private:
    std::vector<T> reversed_;
    std::vector<T> line_;
    std::size_t pos_ = 0;
};

} // namespace quell::dsp
