// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The last maxDelay + 1 samples of each of several channels, in rings that share one write position:
// z^-D for any D up to maxDelay, read sample by sample (a delay that moves, an interpolating reader) or
// as a fixed delay over a block. The plugin's bypass path (the input delayed by the reported latency),
// the engine's microphone for a late block and the far end's alignment to its echo all delay a
// signal this way; one tested ring serves them, so an off-by-one cannot hide in one of three copies.
//
// One frame: write() every channel's newest sample, read() any delay of it (0 = the sample just
// written), then advance().
//
// Threading: one thread at a time; nothing allocates after prepare().
#include <cstddef>
#include <vector>

namespace quell::dsp {

class DelayLine {
public:
    // Sizes the rings for delays up to maxDelay frames (>= 0) and clears them.
    void prepare(int channels, int maxDelay);
    // Silence in every ring (the delayed signal starts from zeros again).
    void reset();

    std::size_t channels() const { return channels_; }
    int maxDelay() const { return static_cast<int>(length_) - 1; }

    void write(std::size_t channel, float x) noexcept { ring_[channel * length_ + newest_] = x; }
    // Channel's sample written `delay` frames before the newest; delay <= maxDelay().
    float read(std::size_t channel, std::size_t delay) const noexcept
    {
        const std::size_t at = newest_ >= delay ? newest_ - delay : newest_ + length_ - delay;
        return ring_[channel * length_ + at];
    }
    void advance() noexcept { newest_ = newest_ + 1 == length_ ? 0 : newest_ + 1; }

    // For readers that interpolate between samples: a channel's ring, its length and the newest's index.
    const float* ring(std::size_t channel) const noexcept { return &ring_[channel * length_]; }
    std::size_t length() const noexcept { return length_; }
    std::size_t newest() const noexcept { return newest_; }

    // A fixed delay over n frames of the first `channels` channels (planar): out[c][i] is in[c][i - delay],
    // from earlier calls' samples where i < delay. delay <= maxDelay(); in may alias out.
    void process(const float* const* in, float* const* out, std::size_t channels, std::size_t n,
                 std::size_t delay) noexcept;

private:
    std::vector<float> ring_;   // channel c at [c * length_, (c + 1) * length_)
    std::size_t channels_ = 0, length_ = 1, newest_ = 0;
};

} // namespace quell::dsp
