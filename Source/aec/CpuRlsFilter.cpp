// SPDX-License-Identifier: GPL-3.0-or-later
#include <string>

#include "aec/CpuFilterAdapter.h"
#include "dsp/FastRls.h"

namespace quell::aec {
namespace {

// Several far-end channels: the float32 RLS with its covariance (their regressor does not shift as one).
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

// One far-end channel: the same least squares at O(N) per sample (dsp::FastRls).
class CpuFastRlsFilter final : public CpuFilterAdapter<dsp::FastRls> {
public:
    explicit CpuFastRlsFilter(const dsp::RlsSettings& settings) { filter_.prepare(settings); }
    int taps() const override { return filter_.taps(); }
    int channels() const override { return 1; }
    void restartCovariance() override { filter_.restartCovariance(); }
    std::string description() const override { return "CPU float64 fast RLS, " + std::to_string(taps()) + " taps"; }
};

} // namespace

std::unique_ptr<LinearEchoFilter> makeCpuRlsFilter(const dsp::RlsSettings& settings, int threads)
{
    if (settings.channels == 1 && settings.tapsPerChannel >= 2)
        return std::make_unique<CpuFastRlsFilter>(settings);
    return std::make_unique<CpuRlsFilter>(settings, threads);
}

} // namespace quell::aec
