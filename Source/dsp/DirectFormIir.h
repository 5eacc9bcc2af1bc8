// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// An order-M linear recurrence in direct form I:
//     y[n] = sum_{k=0..M} b[k] x[n-k] + sum_{j=1..M} a[j] y[n-j]
// Note the plus sign on the feedback terms (the recurrence form of the GPU IIR papers), unlike SciPy's
// lfilter, whose a[1..M] enter with a minus sign.  a[0] is ignored.
// State (the last M inputs and outputs) is carried across calls and can be set for initial conditions.
// Threading: one thread at a time; process() never allocates after prepare().
#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

namespace quell::dsp {

template <typename T>
class DirectFormIir {
public:
    // b has M+1 entries, a has M+1 entries (a[0] unused); orders of b and a may differ by padding zeros.
    void prepare(std::span<const T> b, std::span<const T> a)
    {
        if (b.empty())
            throw std::invalid_argument("DirectFormIir: b must have at least one coefficient");
        order_ = std::max(b.size(), a.empty() ? std::size_t(1) : a.size()) - 1;
        b_.assign(order_ + 1, T(0));
        a_.assign(order_ + 1, T(0));
        std::copy(b.begin(), b.end(), b_.begin());
        if (!a.empty())
            std::copy(a.begin() + 1, a.end(), a_.begin() + 1);
        xHist_.assign(order_, T(0));
        yHist_.assign(order_, T(0));
    }

    void reset()
    {
        std::fill(xHist_.begin(), xHist_.end(), T(0));
        std::fill(yHist_.begin(), yHist_.end(), T(0));
    }

    // Initial conditions: pastInputs[j] = x[-1-j], pastOutputs[j] = y[-1-j], j < M.
    void setState(std::span<const T> pastInputs, std::span<const T> pastOutputs)
    {
        if (pastInputs.size() != order_ || pastOutputs.size() != order_)
            throw std::invalid_argument("DirectFormIir: state must have exactly M entries each");
        std::copy(pastInputs.begin(), pastInputs.end(), xHist_.begin());
        std::copy(pastOutputs.begin(), pastOutputs.end(), yHist_.begin());
    }

    // in and out may alias.
    void process(std::span<const T> in, std::span<T> out)
    {
        if (out.size() < in.size())
            throw std::invalid_argument("DirectFormIir: output shorter than input");
        for (std::size_t n = 0; n < in.size(); ++n) {
            const T x = in[n];
            T y = b_[0] * x;
            for (std::size_t k = 1; k <= order_; ++k)
                y += b_[k] * xHist_[k - 1] + a_[k] * yHist_[k - 1];
            // Histories are short (M <= a few dozen): a shift is cheaper than ring indexing here.
            for (std::size_t k = order_; k > 1; --k) {
                xHist_[k - 1] = xHist_[k - 2];
                yHist_[k - 1] = yHist_[k - 2];
            }
            if (order_ > 0) {
                xHist_[0] = x;
                yHist_[0] = y;
            }
            out[n] = y;
        }
    }

    std::size_t order() const { return order_; }

private:
    std::size_t order_ = 0;
    std::vector<T> b_, a_, xHist_, yHist_;
};

} // namespace quell::dsp
