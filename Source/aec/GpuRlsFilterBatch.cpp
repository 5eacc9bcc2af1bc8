// SPDX-License-Identifier: GPL-3.0-or-later
// The GPU's LinearFilterBatch: one batched block-exact RLS (Kernels/rls/GpuBlockRls.h) for every stream.
#include "aec/LinearFilterBatch.h"

#include <algorithm>
#include <stdexcept>

#if defined(QUELL_HAS_CUDA)
#include "common/GpuDevice.h"
#include "rls/GpuBlockRls.h"
#endif

namespace quell::aec {

std::unique_ptr<LinearFilterBatch> makeGpuRlsFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall);

#if defined(QUELL_HAS_CUDA)
namespace {

// Every call is one pass per k samples over each stream's P (k divides the call: gpuBatchBlockSamples),
// so a stream's restart and adaptation, asked between calls by its canceller, fall between passes, and
// the weights after a call are w0, brought back with the errors (mirrorWeights) for the foreground
// copies that every canceller's segment end may take.
class GpuRlsFilterBatch final : public LinearFilterBatch {
public:
    GpuRlsFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall)
        : LinearFilterBatch(streams, maxCall, plan.tapsPerChannel(), plan.channels()), k_(gpuBatchBlockSamples(maxCall)),
          device_(gpu::queryDevice().description)
    {
        if (const std::string why = gpu::GpuBlockRls::whyNot(plan.rls, k_, maxCall, streams); !why.empty())
            throw std::invalid_argument(why);
        rls_.prepare(plan.rls, k_, maxCall, streams);
        rls_.mirrorWeights();
        const std::size_t n = static_cast<std::size_t>(streams);
        adapting_.assign(n, 1);
        held_.assign(n, 0);
        restart_.assign(n, 0);
        pendingDelta_.assign(n, 0.0);
    }
    void process(std::size_t samples, std::span<const unsigned char> idle) override
    {
        if (samples % static_cast<std::size_t>(k_) != 0)
            throw std::invalid_argument("GPU filter batch: calls of " + std::to_string(samples) + " samples, which " + std::to_string(k_)
                                        + " (its samples a pass) does not divide");
        const std::size_t n = static_cast<std::size_t>(streams());
        const bool anyHeld = heldStreams(idle, held_);
        // A delta asked since the last call, before the call's restarts (rare: a canceller matches its far
        // end's level once, and follows it in steps).
        for (std::size_t s = 0; s < n; ++s)
            if (pendingDelta_[s] > 0.0) {
                rls_.setRestartDelta(static_cast<int>(s), pendingDelta_[s]);
                pendingDelta_[s] = 0.0;
            }
        rls_.processBatch(mic_.data(), ref_.data(), out_.data(), samples, maxCall(), adapting_.data(), restart_.data(),
                          anyHeld ? held_.data() : nullptr);
        std::fill(restart_.begin(), restart_.end(), 0);
    }
    void resetStream(int stream) override
    {
        rls_.resetStream(stream);
        adapting_[static_cast<std::size_t>(stream)] = 1;
        restart_[static_cast<std::size_t>(stream)] = 0;
        pendingDelta_[static_cast<std::size_t>(stream)] = 0.0;
    }
    void setAdaptation(int stream, bool on) override { adapting_[static_cast<std::size_t>(stream)] = on ? 1 : 0; }
    void restartCovariance(int stream) override { restart_[static_cast<std::size_t>(stream)] = 1; }
    bool setRestartDelta(int stream, double delta) override
    {
        dsp::validateDelta(delta);   // here, where it is asked, not at the next call
        pendingDelta_[static_cast<std::size_t>(stream)] = delta;
        return true;
    }
    void copyWeights(int stream, std::span<float> out) const override
    {
        copyPadded({rls_.mirroredWeights(stream), static_cast<std::size_t>(taps() * channels())}, out);
    }
    dsp::RlsHealth health(int stream) const override { return rls_.health(stream); }
    std::string description() const override
    {
        return "GPU float32 block RLS batch (" + std::to_string(streams()) + " streams, " + std::to_string(k_) + " samples a pass), "
               + std::to_string(taps() * channels()) + " taps, on " + device_;
    }
    bool onGpu() const override { return true; }

private:
    gpu::GpuBlockRls rls_;
    int k_ = 32;
    std::string device_;
    std::vector<unsigned char> adapting_, held_, restart_;   // per stream: asked, this call's held flag, restart marks
    std::vector<double> pendingDelta_;   // per stream: a restart delta asked for since the last call, or 0
};

} // namespace

std::unique_ptr<LinearFilterBatch> makeGpuRlsFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall)
{
    return std::make_unique<GpuRlsFilterBatch>(plan, streams, maxCall);
}

#else

std::unique_ptr<LinearFilterBatch> makeGpuRlsFilterBatch(const FilterPlan&, int, std::size_t)
{
    throw std::invalid_argument("this build of Quell has no CUDA support (configured with QUELL_CUDA=OFF)");
}

#endif

} // namespace quell::aec
