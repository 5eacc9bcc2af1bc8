// SPDX-License-Identifier: GPL-3.0-or-later
#include "DelayLine.h"

#include <algorithm>

namespace quell::plugin {

void DelayLine::prepare(int channels, int delaySamples)
{
    delay_ = std::max(delaySamples, 0);
    // One slot more than the delay: the slot about to be overwritten holds the sample due now.
    lines_.assign(static_cast<std::size_t>(std::max(channels, 0)), std::vector<float>(static_cast<std::size_t>(delay_) + 1, 0.0f));
    positions_.assign(lines_.size(), 0);
}

void DelayLine::reset()
{
    for (auto& line : lines_)
        std::fill(line.begin(), line.end(), 0.0f);
    std::fill(positions_.begin(), positions_.end(), 0);
}

void DelayLine::process(int channel, const float* in, float* out, int n) noexcept
{
    auto& line = lines_[static_cast<std::size_t>(channel)];
    std::size_t pos = positions_[static_cast<std::size_t>(channel)];
    const std::size_t size = line.size();
    for (int i = 0; i < n; ++i) {
        line[pos] = in[i];
        pos = pos + 1 == size ? 0 : pos + 1;
        out[i] = line[pos];   // written `delay` samples ago (or the sample just written when delay is 0)
    }
    positions_[static_cast<std::size_t>(channel)] = pos;
}

} // namespace quell::plugin
