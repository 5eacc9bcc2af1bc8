// SPDX-License-Identifier: GPL-3.0-or-later
#include <string>

#include "aec/CpuFilterAdapter.h"
#include "dsp/Pbfdkf.h"

namespace quell::aec {
namespace {

class CpuKalmanFilter final : public CpuFilterAdapter<dsp::Pbfdkf> {
public:
    explicit CpuKalmanFilter(const dsp::PbfdkfSettings& settings) { filter_.prepare(settings); }
    int taps() const override { return filter_.settings().taps; }
    int channels() const override { return filter_.settings().channels; }
    void restartCovariance() override { filter_.restartUncertainty(); }
    std::string description() const override
    {
        std::string text = "CPU float32 frequency-domain Kalman filter, ";
        if (channels() > 1)
            text += std::to_string(channels()) + " far-end channels x ";
        return text + std::to_string(taps()) + " taps (" + std::to_string(filter_.partitions()) + " partitions of "
               + std::to_string(filter_.blockSize()) + ")";
    }
};

} // namespace

std::unique_ptr<LinearEchoFilter> makeCpuKalmanFilter(const dsp::PbfdkfSettings& settings)
{
    return std::make_unique<CpuKalmanFilter>(settings);
}

} // namespace quell::aec
