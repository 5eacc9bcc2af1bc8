// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The RLS regressor u(n) (dsp::Rls and dsp::BlockRls): tapsPerChannel samples of each far-end channel,
// channel after channel, newest first, with its energy |u|^2 kept as a running sum for the far-end
// silence test. Non-finite far-end samples enter as zero and are reported, so neither the state nor the
// energy ever holds NaN or Inf. Sized at prepare; push() does not allocate.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "dsp/AlignedBuffer.h"

namespace quell::dsp {

template <typename T>
class RlsRegressor {
public:
    // stride >= taps: the buffer's length, zero past the taps (the row kernels' padding).
    void prepare(int taps, int channels, std::size_t stride)
    {
        taps_ = static_cast<std::size_t>(taps);
        channels_ = static_cast<std::size_t>(channels);
        u_.resize(stride);
        reset();
    }
    void reset()
    {
        u_.zero();
        energy_ = 0.0;
        sinceResum_ = 0;
    }

    // Shifts each channel's part by one and puts x[c] in front. Returns true if a sample was not finite.
    bool push(const T* x)
    {
        const std::size_t length = taps_ / channels_;
        bool sanitised = false;
        for (std::size_t c = 0; c < channels_; ++c) {
            T xc = x[c];
            if (!std::isfinite(xc)) {
                xc = T(0);
                sanitised = true;
            }
            T* part = u_.data() + c * length;
            const T leaving = part[length - 1];
            std::copy_backward(part, part + length - 1, part + length);
            part[0] = xc;
            energy_ += static_cast<double>(xc) * xc - static_cast<double>(leaving) * leaving;
        }
        if (++sinceResum_ >= 4096) { // bound the drift of the running sum
            energy_ = 0.0;
            for (std::size_t i = 0; i < taps_; ++i)
                energy_ += static_cast<double>(u_[i]) * u_[i];
            sinceResum_ = 0;
        }
        return sanitised;
    }

    const T* data() const { return u_.data(); }
    // |u|^2, exact up to the rounding of the last 4096 updates.
    double energy() const { return energy_; }

private:
    std::size_t taps_ = 0, channels_ = 1;
    AlignedBuffer<T> u_;
    double energy_ = 0.0;
    int sinceResum_ = 0;
};

} // namespace quell::dsp
