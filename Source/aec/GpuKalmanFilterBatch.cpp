// SPDX-License-Identifier: GPL-3.0-or-later
// The GPU's Kalman LinearFilterBatch: one batched frequency-domain Kalman filter (Kernels/kalman/
// GpuBatchedPbfdkf.h) for every stream, a server's choice where the RLS batch is too dear per stream.
#include "aec/LinearFilterBatch.h"

#include <algorithm>
#include <stdexcept>

#if defined(QUELL_HAS_CUDA)
#include "common/GpuDevice.h"
#include "kalman/GpuBatchedPbfdkf.h"
#endif

namespace quell::aec {

std::unique_ptr<LinearFilterBatch> makeGpuKalmanFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall);

#if defined(QUELL_HAS_CUDA)
namespace {

// The filter works in whole blocks of B samples, so B divides every call (the plan's block:
// kalmanBatchBlockSize); then each block's output is a CPU filter's of the same settings up to rounding,
// with no added latency. A stream's controls, asked between calls, reach the device before the next
// call's first block; its taps and health come back after every call (mirrorState) for the foreground
// copies its canceller may take at any segment's end.
class GpuKalmanFilterBatch final : public LinearFilterBatch {
public:
    GpuKalmanFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall)
        : LinearFilterBatch(streams, maxCall, plan.tapsPerChannel(), plan.channels())
    {
        // (One far-end channel and the largest block are GpuBatchedPbfdkf::prepare's checks.)
        const dsp::PbfdkfSettings settings = plan.kalmanSettings();
        block_ = settings.blockSize != 0 ? settings.blockSize : dsp::automaticBlockSize(settings.taps);
        if (maxCall % static_cast<std::size_t>(block_) != 0)
            throw std::invalid_argument("the GPU Kalman batch works in whole blocks: its block of " + std::to_string(block_)
                                        + " samples does not divide calls of " + std::to_string(maxCall));
        const gpu::DeviceInfo device = gpu::queryDevice();
        if (!device.available)
            throw std::invalid_argument("no usable GPU for the Kalman batch (" + device.description + ")");
        device_ = device.description;
        kalman_ = std::make_unique<gpu::GpuBatchedPbfdkf>();   // (its CUDA stream needs the device checked first)
        kalman_->prepare(settings, streams, static_cast<int>(maxCall) / block_);
        kalman_->mirrorState();
        const std::size_t n = static_cast<std::size_t>(streams);
        adapting_.assign(n, 1);
        held_.assign(n, 0);
        controls_.assign(n, 0);
    }
    void process(std::size_t samples, std::span<const unsigned char> idle) override
    {
        if (samples > maxCall() || samples % static_cast<std::size_t>(block_) != 0)
            throw std::invalid_argument("GPU Kalman batch: a call of " + std::to_string(samples) + " samples, at most "
                                        + std::to_string(maxCall()) + " in whole blocks of " + std::to_string(block_));
        const bool anyHeld = heldStreams(idle, held_);
        if (controlsPending_) {
            kalman_->controlStreams(controls_.data());
            std::fill(controls_.begin(), controls_.end(), 0);
            controlsPending_ = false;
        }
        kalman_->process(mic_.data(), ref_.data(), out_.data(), samples, maxCall(), adapting_.data(), anyHeld ? held_.data() : nullptr);
    }
    void resetStream(int stream) override
    {
        const std::size_t s = static_cast<std::size_t>(stream);
        controls_.at(s) = gpu::GpuBatchedPbfdkf::Reset;
        controlsPending_ = true;
        adapting_[s] = 1;
    }
    void setAdaptation(int stream, bool on) override { adapting_.at(static_cast<std::size_t>(stream)) = on ? 1 : 0; }
    void restartCovariance(int stream) override
    {
        unsigned char& c = controls_.at(static_cast<std::size_t>(stream));
        if (c == gpu::GpuBatchedPbfdkf::Keep)   // a reset already asked for restarts it too
            c = gpu::GpuBatchedPbfdkf::RestartUncertainty;
        controlsPending_ = true;
    }
    void copyWeights(int stream, std::span<float> out) const override
    {
        if (controls_.at(static_cast<std::size_t>(stream)) == gpu::GpuBatchedPbfdkf::Reset) {   // reset, not yet on the device: a new filter's
            std::fill(out.begin(), out.end(), 0.0f);
            return;
        }
        copyPadded({kalman_->mirroredTaps(stream), static_cast<std::size_t>(taps())}, out);
    }
    dsp::RlsHealth health(int stream) const override
    {
        if (controls_.at(static_cast<std::size_t>(stream)) == gpu::GpuBatchedPbfdkf::Reset)
            return {};
        return kalman_->mirroredHealth(stream);
    }
    std::string description() const override
    {
        return "GPU float32 frequency-domain Kalman filter batch (" + std::to_string(streams()) + " streams), " + std::to_string(taps())
               + " taps (" + std::to_string(kalman_->partitions()) + " partitions of " + std::to_string(block_) + "), on " + device_;
    }
    bool onGpu() const override { return true; }

private:
    std::unique_ptr<gpu::GpuBatchedPbfdkf> kalman_;
    int block_ = 0;
    std::string device_;
    std::vector<unsigned char> adapting_, held_, controls_;   // per stream: asked, this call's held flag, its Control
    bool controlsPending_ = false;
};

} // namespace

std::unique_ptr<LinearFilterBatch> makeGpuKalmanFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall)
{
    return std::make_unique<GpuKalmanFilterBatch>(plan, streams, maxCall);
}

#else

std::unique_ptr<LinearFilterBatch> makeGpuKalmanFilterBatch(const FilterPlan&, int, std::size_t)
{
    throw std::invalid_argument("this build of Quell has no CUDA support (configured with QUELL_CUDA=OFF)");
}

#endif

} // namespace quell::aec
