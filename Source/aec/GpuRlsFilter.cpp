// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FilterPlan.h"
#include "aec/LinearEchoFilter.h"

#include <algorithm>

#include <chrono>
#include <random>
#include <stdexcept>

#if defined(QUELL_HAS_CUDA)
#include "common/GpuDevice.h"
#include "rls/GpuRls.h"
#endif

namespace quell::aec {

#if defined(QUELL_HAS_CUDA)
namespace {

class GpuRlsFilter final : public LinearEchoFilter {
public:
    GpuRlsFilter(const dsp::RlsSettings& settings, std::size_t maxBlock, std::string device)
        : device_(std::move(device)), farEndChannels_(settings.channels), tapsPerChannel_(settings.tapsPerChannel)
    {
        rls_.prepare(settings, 1, maxBlock);
    }
    // ref: the far-end channels interleaved (the GPU RLS takes them so; processInterleaved() comes here).
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        rls_.process(mic, ref, out);
    }
    void reset() override { rls_.reset(); }
    int taps() const override { return tapsPerChannel_; }
    int channels() const override { return farEndChannels_; }
    void restartCovariance() override { rls_.restartCovariance(0); }
    void setAdaptation(bool on) override { rls_.setAdaptation(on); }
    std::vector<float> weights() const override { return rls_.weights(0); }
    void copyWeights(std::span<float> out) const override
    {
        const std::size_t n = std::min(out.size(), static_cast<std::size_t>(rls_.taps()));
        rls_.copyWeights(0, out.data(), n);
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(n), out.end(), 0.0f);
    }
    dsp::RlsHealth health() const override { return rls_.health(0); }
    std::string description() const override
    {
        const std::string taps = farEndChannels_ > 1 ? std::to_string(farEndChannels_) + " far-end channels x "
                                                           + std::to_string(tapsPerChannel_)
                                                     : std::to_string(rls_.taps());
        return "GPU float32 RLS, " + taps + " taps, on " + device_;
    }
    bool onGpu() const override { return true; }

private:
    gpu::GpuRls rls_;
    std::string device_;
    int farEndChannels_ = 1, tapsPerChannel_ = 0;
};

} // namespace

std::string gpuRlsWhyNot(const dsp::RlsSettings& settings, std::size_t maxBlock)
{
    const gpu::DeviceInfo device = gpu::queryDevice();
    if (!device.available)
        return device.description;
    return gpu::GpuRls::whyNot(settings, 1, maxBlock);
}

std::unique_ptr<LinearEchoFilter> makeGpuRlsFilter(const dsp::RlsSettings& settings, std::size_t maxBlock)
{
    return std::make_unique<GpuRlsFilter>(settings, maxBlock, gpu::queryDevice().description);
}

double measureGpuRlsSamplesPerSecond(const dsp::RlsSettings& settings, std::size_t block)
{
    if (!gpuRlsWhyNot(settings, block).empty())
        return 0.0;
    gpu::GpuRls rls;
    rls.prepare(settings, 1, block);
    std::mt19937 rng(1);
    std::normal_distribution<float> g(0.0f, 0.05f);
    const std::size_t samples = 2400, warmUp = 4 * block;
    std::vector<float> x(settings.channels * (samples + warmUp)), d(samples + warmUp), e(d.size());
    for (auto& v : x)
        v = g(rng);
    for (auto& v : d)
        v = g(rng);
    auto run = [&](std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to; i += block) {
            const std::size_t n = std::min(block, to - i);
            rls.process(d.data() + i, x.data() + i * settings.channels, e.data() + i, n);
        }
    };
    run(0, warmUp);
    const auto t0 = std::chrono::steady_clock::now();
    run(warmUp, warmUp + samples);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return seconds > 0.0 ? static_cast<double>(samples) / seconds : 0.0;
}

#else

double measureGpuRlsSamplesPerSecond(const dsp::RlsSettings&, std::size_t) { return 0.0; }

std::string gpuRlsWhyNot(const dsp::RlsSettings&, std::size_t)
{
    return "this build of Quell has no CUDA support (configured with QUELL_CUDA=OFF)";
}

std::unique_ptr<LinearEchoFilter> makeGpuRlsFilter(const dsp::RlsSettings&, std::size_t)
{
    throw std::invalid_argument("this build of Quell has no CUDA support (configured with QUELL_CUDA=OFF)");
}

#endif

} // namespace quell::aec
