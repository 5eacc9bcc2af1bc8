// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FilterPlan.h"
#include "aec/LinearEchoFilter.h"

#include <algorithm>

#include <chrono>
#include <random>
#include <stdexcept>

#if defined(QUELL_HAS_CUDA)
#include "common/GpuDevice.h"
#include "rls/GpuBlockRls.h"
#endif

namespace quell::aec {

#if defined(QUELL_HAS_CUDA)
namespace {

// The canceller's GPU RLS is the block-exact kernel (Kernels/rls/GpuBlockRls.h): the per-sample
// kernel's outputs up to rounding, 2 to 3 times its speed at every length from 256 taps on the H100
// (Kernels/rls/NOTES.md, run 14). 32 samples a block: 2 ms at 16 kHz, a fifth of the canceller's 10 ms
// segment, so its calls end on block boundaries. 64 ran 3 to 12 % faster in the benchmark's long calls,
// but every call that splits a block replays it from its first step, and the engine's calls (about 43
// samples at 128 frames, 48 kHz) split most blocks. In the engine (H200, 2026-11-27, 20 s rows at 128 /
// 256 frames, processing median in us) 32 gave 464 / 787 and 487 / 825 in two runs, 16 gave 619 / 1155,
// and 40, which ends a block on every segment end, gave 487 / 866
// (Tests/bench/results/2026-11-27/h200-compute-v-four-rows/k-sweep/; the row for 64 did not come back).
constexpr int kGpuRlsBlockSamples = 32;

class GpuRlsFilter final : public LinearEchoFilter {
public:
    GpuRlsFilter(const dsp::RlsSettings& settings, std::size_t maxBlock, std::string device)
        : device_(std::move(device)), farEndChannels_(settings.channels), tapsPerChannel_(settings.tapsPerChannel)
    {
        rls_.prepare(settings, kGpuRlsBlockSamples, maxBlock);
    }
    // ref: the far-end channels interleaved (the GPU RLS takes them so; processInterleaved() comes here).
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        rls_.process(mic.data(), ref.data(), out.data(), mic.size());
    }
    // One round trip to the device for both sides of the canceller's segment end.
    void processSplit(std::span<const float> mic, std::span<const float> ref, std::span<float> out, std::size_t split,
                      bool restartAtSplit, bool adaptAfter, std::span<float> weightsAtSplit) override
    {
        const std::size_t n = std::min(weightsAtSplit.size(), static_cast<std::size_t>(rls_.taps()));
        rls_.processSplit(mic.data(), ref.data(), out.data(), mic.size(), split, restartAtSplit, adaptAfter, weightsAtSplit.data(), n);
        std::fill(weightsAtSplit.begin() + static_cast<std::ptrdiff_t>(n), weightsAtSplit.end(), 0.0f);
    }
    void reset() override { rls_.reset(); }
    int taps() const override { return tapsPerChannel_; }
    int channels() const override { return farEndChannels_; }
    void restartCovariance() override { rls_.restartCovariance(); }
    bool setRestartDelta(double delta) override
    {
        rls_.setRestartDelta(0, delta);
        return true;
    }
    void setAdaptation(bool on) override { rls_.setAdaptation(on); }
    std::vector<float> weights() const override { return rls_.weights(); }
    void copyWeights(std::span<float> out) const override
    {
        const std::size_t n = std::min(out.size(), static_cast<std::size_t>(rls_.taps()));
        rls_.copyWeights(out.data(), n);
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(n), out.end(), 0.0f);
    }
    dsp::RlsHealth health() const override { return rls_.health(); }
    std::string description() const override
    {
        const std::string taps = farEndChannels_ > 1 ? std::to_string(farEndChannels_) + " far-end channels x "
                                                           + std::to_string(tapsPerChannel_)
                                                     : std::to_string(rls_.taps());
        return "GPU float32 block RLS (" + std::to_string(kGpuRlsBlockSamples) + " samples a pass), " + taps + " taps, on " + device_;
    }
    bool onGpu() const override { return true; }

private:
    gpu::GpuBlockRls rls_;
    std::string device_;
    int farEndChannels_ = 1, tapsPerChannel_ = 0;
};

} // namespace

std::string gpuRlsWhyNot(const dsp::RlsSettings& settings, std::size_t maxBlock)
{
    const gpu::DeviceInfo device = gpu::queryDevice();
    if (!device.available)
        return device.description;
    return gpu::GpuBlockRls::whyNot(settings, kGpuRlsBlockSamples, maxBlock);
}

std::unique_ptr<LinearEchoFilter> makeGpuRlsFilter(const dsp::RlsSettings& settings, std::size_t maxBlock)
{
    return std::make_unique<GpuRlsFilter>(settings, maxBlock, gpu::queryDevice().description);
}

double measureGpuRlsSamplesPerSecond(const dsp::RlsSettings& settings, std::size_t block)
{
    if (!gpuRlsWhyNot(settings, block).empty())
        return 0.0;
    gpu::GpuBlockRls rls;
    rls.prepare(settings, kGpuRlsBlockSamples, block);
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
