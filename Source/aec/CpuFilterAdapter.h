// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one adapter from a CPU filter of Source/dsp (Rls, Pbfdkf, Nlms) to LinearEchoFilter: what they
// share (processing, weights without allocating, adaptation on/off) is written here once; each filter
// says only its length, restart and description (CpuRlsFilter.cpp, CpuKalmanFilter.cpp, CpuNlmsFilter.cpp).
#include <span>
#include <stdexcept>
#include <vector>

#include "aec/LinearEchoFilter.h"

namespace quell::aec {

template <typename Filter>
class CpuFilterAdapter : public LinearEchoFilter {
public:
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        if constexpr (requires { filter_.process(mic, ref, out); })
            filter_.process(mic, ref, out);
        else
            throw std::logic_error("this filter takes two far-end channels (processInterleaved)");
    }
    void processInterleaved(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        if constexpr (requires { filter_.processInterleaved(mic, ref, out); })
            filter_.processInterleaved(mic, ref, out);
        else
            filter_.process(mic, ref, out);   // one far-end channel
    }
    void reset() override { filter_.reset(); }
    void setAdaptation(bool on) override { filter_.setAdaptation(on); }
    std::vector<float> weights() const override
    {
        const auto w = filter_.weights();
        return {w.begin(), w.end()};
    }
    void copyWeights(std::span<float> out) const override { copyPadded(filter_.weights(), out); }
    bool setRestartDelta(double delta) override
    {
        if constexpr (requires { filter_.setRestartDelta(delta); }) {
            filter_.setRestartDelta(delta);
            return true;
        } else {
            return false;   // no covariance prior (the Kalman filter, NLMS)
        }
    }
    dsp::RlsHealth health() const override
    {
        if constexpr (requires { filter_.health(); })
            return filter_.health();
        else
            return {};
    }
    bool onGpu() const override { return false; }

protected:
    Filter filter_;
};

} // namespace quell::aec
