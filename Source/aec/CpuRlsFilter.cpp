#include "aec/LinearEchoFilter.h"

#include <string>

namespace quell::aec {
namespace {

class CpuRlsFilter final : public LinearEchoFilter {
public:
    CpuRlsFilter(const dsp::RlsSettings& settings, int threads)
    {
        rls_.prepare(settings);
        rls_.setWorkerThreads(threads);
    }
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        rls_.process(mic, ref, out);
    }
    void processInterleaved(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        rls_.processInterleaved(mic, ref, out);
    }
    void reset() override { rls_.reset(); }
    void restartCovariance() override { rls_.restartCovariance(); }
    void setAdaptation(bool on) override { rls_.setAdaptation(on); }
    std::vector<float> weights() const override
    {
        const auto w = rls_.weights();
        return {w.begin(), w.end()};
    }
    void copyWeights(std::span<float> out) const override { copyPadded(rls_.weights(), out); }
    dsp::RlsHealth health() const override { return rls_.health(); }
    std::string description() const override
    {
        const int channels = rls_.settings().channels;
        if (channels > 1)
            return "CPU float32 RLS, " + std::to_string(channels) + " far-end channels x " + std::to_string(rls_.taps() / channels)
                   + " taps";
        return "CPU float32 RLS, " + std::to_string(rls_.taps()) + " taps";
    }
    bool onGpu() const override { return false; }

private:
    dsp::Rls<float> rls_;
};

} // namespace

std::unique_ptr<LinearEchoFilter> makeCpuRlsFilter(const dsp::RlsSettings& settings, int threads)
{
    return std::make_unique<CpuRlsFilter>(settings, threads);
}

} // namespace quell::aec
