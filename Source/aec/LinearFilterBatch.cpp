// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/LinearFilterBatch.h"

#include <algorithm>
#include <stdexcept>

namespace quell::aec {

// Defined in GpuRlsFilterBatch.cpp (with CUDA; without, it refuses).
std::unique_ptr<LinearFilterBatch> makeGpuRlsFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall);
// Defined in GpuKalmanFilterBatch.cpp (likewise).
std::unique_ptr<LinearFilterBatch> makeGpuKalmanFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall);

LinearFilterBatch::LinearFilterBatch(int streams, std::size_t maxCall, int taps, int channels)
    : streams_(streams), maxCall_(maxCall), taps_(taps), channels_(channels)
{
    if (streams < 1)
        throw std::invalid_argument("a filter batch needs at least one stream (got " + std::to_string(streams) + ")");
    if (maxCall < 1)
        throw std::invalid_argument("a filter batch's calls must hold at least one sample");
    const std::size_t n = static_cast<std::size_t>(streams) * maxCall;
    mic_.assign(n, 0.0f);
    ref_.assign(n * static_cast<std::size_t>(channels), 0.0f);
    out_.assign(n, 0.0f);
}

bool LinearFilterBatch::heldStreams(std::span<const unsigned char> idle, std::span<unsigned char> held) const
{
    bool any = false;
    for (std::size_t i = 0; i < held.size(); ++i) {
        held[i] = !idle.empty() && idle[i] ? 1 : 0;
        any = any || held[i];
    }
    return any;
}

void LinearFilterBatch::processStream(int, std::size_t)
{
    throw std::logic_error("LinearFilterBatch::processStream: this batch runs its streams together (process)");
}

namespace {

// Stream s of a batch as one LinearEchoFilter: controls, weights and health go to the batch's stream.
class BatchSlotFilter final : public LinearEchoFilter {
public:
    BatchSlotFilter(LinearFilterBatch& batch, int stream) : batch_(batch), stream_(stream) {}
    void process(std::span<const float>, std::span<const float>, std::span<float>) override
    {
        throw std::logic_error("a batch's stream filter runs in its batch (EchoCanceller::beginBlock, LinearFilterBatch::process)");
    }
    void reset() override { batch_.resetStream(stream_); }
    int taps() const override { return batch_.taps(); }
    int channels() const override { return batch_.channels(); }
    std::vector<float> weights() const override
    {
        std::vector<float> w(static_cast<std::size_t>(batch_.taps() * batch_.channels()));
        batch_.copyWeights(stream_, w);
        return w;
    }
    void copyWeights(std::span<float> out) const override { batch_.copyWeights(stream_, out); }
    void restartCovariance() override { batch_.restartCovariance(stream_); }
    bool setRestartDelta(double delta) override { return batch_.setRestartDelta(stream_, delta); }
    void setAdaptation(bool on) override { batch_.setAdaptation(stream_, on); }
    dsp::RlsHealth health() const override { return batch_.health(stream_); }
    std::string description() const override { return batch_.description(); }
    bool onGpu() const override { return batch_.onGpu(); }

private:
    LinearFilterBatch& batch_;
    int stream_;
};

// A filter per stream, each the plan's (makeLinearFilter), run by processStream from the caller's threads.
class CpuFilterBatch final : public LinearFilterBatch {
public:
    CpuFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall)
        : LinearFilterBatch(streams, maxCall, plan.tapsPerChannel(), plan.channels())
    {
        filters_.reserve(static_cast<std::size_t>(streams));
        for (int s = 0; s < streams; ++s)
            filters_.push_back(makeLinearFilter(plan));
    }
    void process(std::size_t samples, std::span<const unsigned char> idle) override
    {
        for (int s = 0; s < streams(); ++s)
            if (idle.empty() || !idle[static_cast<std::size_t>(s)])
                processStream(s, samples);
    }
    bool parallelByStream() const override { return true; }
    void processStream(int stream, std::size_t samples) override
    {
        if (samples > maxCall())
            throw std::invalid_argument("LinearFilterBatch: a call of " + std::to_string(samples) + " samples, at most "
                                        + std::to_string(maxCall()));
        const std::size_t c = static_cast<std::size_t>(channels());
        filters_[static_cast<std::size_t>(stream)]->processChannels({micIn(stream), samples}, {refIn(stream), samples * c},
                                                                    {errorIn(stream), samples});
    }
    void resetStream(int stream) override
    {
        LinearEchoFilter& f = *filters_.at(static_cast<std::size_t>(stream));
        f.reset();
        f.setAdaptation(true);
    }
    void setAdaptation(int stream, bool on) override { filters_[static_cast<std::size_t>(stream)]->setAdaptation(on); }
    void restartCovariance(int stream) override { filters_[static_cast<std::size_t>(stream)]->restartCovariance(); }
    bool setRestartDelta(int stream, double delta) override
    {
        return filters_[static_cast<std::size_t>(stream)]->setRestartDelta(delta);
    }
    void copyWeights(int stream, std::span<float> out) const override { filters_[static_cast<std::size_t>(stream)]->copyWeights(out); }
    dsp::RlsHealth health(int stream) const override { return filters_.at(static_cast<std::size_t>(stream))->health(); }
    std::string description() const override { return filters_.front()->description() + ", one per stream"; }
    bool onGpu() const override { return filters_.front()->onGpu(); }

private:
    std::vector<std::unique_ptr<LinearEchoFilter>> filters_;
};

} // namespace

std::unique_ptr<LinearEchoFilter> LinearFilterBatch::slotFilter(int stream)
{
    if (stream < 0 || stream >= streams_)
        throw std::out_of_range("LinearFilterBatch::slotFilter: no stream " + std::to_string(stream));
    return std::make_unique<BatchSlotFilter>(*this, stream);
}

int gpuBatchBlockSamples(std::size_t call)
{
    // 32 where it divides the call, as the lone GPU canceller's (GpuRlsFilter.cpp measured it the fastest
    // in the engine); then a stream of a batch runs the same passes as a lone canceller, the same bits.
    if (call % 32 == 0)
        return 32;
    for (std::size_t k = std::min<std::size_t>(64, call); k > 1; --k)
        if (call % k == 0)
            return static_cast<int>(k);
    return 1;
}

int kalmanBatchBlockSize(int taps, std::size_t call)
{
    for (int b = dsp::automaticBlockSize(taps); b >= 16; b /= 2)
        if (call % static_cast<std::size_t>(b) == 0)
            return b;
    return 0;
}

std::unique_ptr<LinearFilterBatch> makeLinearFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall, bool kalmanOnGpu)
{
    if (plan.engine == FilterEngine::GpuRls)
        return makeGpuRlsFilterBatch(plan, streams, maxCall);
    if (plan.engine == FilterEngine::CpuKalman && kalmanOnGpu)
        return makeGpuKalmanFilterBatch(plan, streams, maxCall);
    return std::make_unique<CpuFilterBatch>(plan, streams, maxCall);
}

} // namespace quell::aec
