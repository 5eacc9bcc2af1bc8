#include "aec/LinearEchoFilter.h"

#include <string>

#include "dsp/Pbfdkf.h"

namespace quell::aec {
namespace {

class CpuKalmanFilter final : public LinearEchoFilter {
public:
    explicit CpuKalmanFilter(const dsp::PbfdkfSettings& settings) { kalman_.prepare(settings); }
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        kalman_.process(mic, ref, out);
    }
    void processInterleaved(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        kalman_.processInterleaved(mic, ref, out);
    }
    void reset() override { kalman_.reset(); }
    void restartCovariance() override { kalman_.restartUncertainty(); }
    void setAdaptation(bool on) override { kalman_.setAdaptation(on); }
    std::vector<float> weights() const override
    {
        const auto w = kalman_.weights();
        return {w.begin(), w.end()};
    }
    void copyWeights(std::span<float> out) const override { copyPadded(kalman_.weights(), out); }
    dsp::RlsHealth health() const override { return kalman_.health(); }
    std::string description() const override
    {
        const auto& s = kalman_.settings();
        std::string text = "CPU float32 frequency-domain Kalman filter, ";
        if (s.channels > 1)
            text += std::to_string(s.channels) + " far-end channels x ";
        return text + std::to_string(s.taps) + " taps (" + std::to_string(kalman_.partitions()) + " partitions of "
               + std::to_string(kalman_.blockSize()) + ")";
    }
    bool onGpu() const override { return false; }

private:
    dsp::Pbfdkf kalman_;
};

} // namespace

std::unique_ptr<LinearEchoFilter> makeCpuKalmanFilter(const dsp::PbfdkfSettings& settings)
{
    return std::make_unique<CpuKalmanFilter>(settings);
}

} // namespace quell::aec
