// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/DelayLine.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace quell::dsp {

void DelayLine::prepare(int channels, int maxDelay)
{
    if (channels < 0 || maxDelay < 0)
        throw std::invalid_argument("DelayLine: channels and maximum delay must not be negative (got "
                                    + std::to_string(channels) + ", " + std::to_string(maxDelay) + ")");
    channels_ = static_cast<std::size_t>(channels);
    length_ = static_cast<std::size_t>(maxDelay) + 1;
    ring_.assign(channels_ * length_, 0.0f);
    newest_ = 0;
}

void DelayLine::reset()
{
    std::fill(ring_.begin(), ring_.end(), 0.0f);
    newest_ = 0;
}

void DelayLine::process(const float* const* in, float* const* out, std::size_t channels, std::size_t n,
                        std::size_t delay) noexcept
{
    channels = std::min(channels, channels_);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t c = 0; c < channels; ++c)
            write(c, in[c][i]);
        for (std::size_t c = 0; c < channels; ++c)
            out[c][i] = read(c, delay);
        advance();
    }
}

} // namespace quell::dsp
