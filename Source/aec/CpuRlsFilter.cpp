// SPDX-License-Identifier: GPL-3.0-or-later
#include <string>

#include "aec/CpuFilterAdapter.h"

namespace quell::aec {
namespace {

class CpuRlsFilter final : public CpuFilterAdapter<dsp::Rls<float>> {
public:
    CpuRlsFilter(const dsp::RlsSettings& settings, int threads)
    {
        filter_.prepare(settings);
        filter_.setWorkerThreads(threads);
    }
    int taps() const override { return filter_.settings().tapsPerChannel; }
    int channels() const override { return filter_.settings().channels; }
    void restartCovariance() override { filter_.restartCovariance(); }
    std::string description() const override
    {
        if (channels() > 1)
            return "CPU float32 RLS, " + std::to_string(channels()) + " far-end channels x " + std::to_string(taps()) + " taps";
        return "CPU float32 RLS, " + std::to_string(taps()) + " taps";
    }
};

} // namespace

std::unique_ptr<LinearEchoFilter> makeCpuRlsFilter(const dsp::RlsSettings& settings, int threads)
{
    return std::make_unique<CpuRlsFilter>(settings, threads);
}

} // namespace quell::aec
