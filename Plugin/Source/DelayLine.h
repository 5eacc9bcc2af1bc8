// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A fixed integer delay per channel, sized at prepare: the bypass path plays the input delayed by the
// plugin's reported latency, so the host's delay compensation stays right whether the plugin is
// bypassed or not. No allocation after prepare().
#include <cstddef>
#include <vector>

namespace quell::plugin {

class DelayLine {
public:
    void prepare(int channels, int delaySamples);
    void reset();
    // Writes `in` (n samples) and reads the samples written delaySamples ago into `out`; in may alias out.
    void process(int channel, const float* in, float* out, int n) noexcept;
    int delaySamples() const { return delay_; }

private:
    std::vector<std::vector<float>> lines_;
    std::vector<std::size_t> positions_;
    int delay_ = 0;
};

} // namespace quell::plugin
