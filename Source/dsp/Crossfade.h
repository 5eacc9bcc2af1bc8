// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A linear crossfade between two signals whose position moves toward a target by a fixed step per
// sample: 0 plays the first, 1 the second, between them a + m (b - a). The front ends' bypass (the
// cancelled output against the microphone delayed by the reported latency) changes this way over a few
// milliseconds instead of clicking; the JUCE plugin and the control-port LV2 share it.
//
// Threading: one thread; no allocation.
#include <algorithm>
#include <cstddef>

namespace quell::dsp {

class Crossfade {
public:
    // rampSamples: samples from one end to the other (at least 1); position: where it starts.
    void prepare(double rampSamples, float position)
    {
        step_ = static_cast<float>(1.0 / std::max(1.0, rampSamples));
        position_ = position;
    }
    float position() const noexcept { return position_; }

    // out[c][i] for n frames of `channels` planar channels, every channel along the same ramp; the
    // position moves on by the block. out may alias a or b.
    void process(const float* const* a, const float* const* b, float* const* out, std::size_t channels, std::size_t n,
                 float target) noexcept
    {
        float m = position_;
        for (std::size_t c = 0; c < channels; ++c) {
            m = position_;
            for (std::size_t i = 0; i < n; ++i) {
                if (m != target)
                    m = target > m ? std::min(target, m + step_) : std::max(target, m - step_);
                out[c][i] = m == 0.0f ? a[c][i] : m == 1.0f ? b[c][i] : a[c][i] + m * (b[c][i] - a[c][i]);
            }
        }
        if (channels > 0)
            position_ = m;
    }

private:
    float step_ = 1.0f, position_ = 0.0f;
};

} // namespace quell::dsp
