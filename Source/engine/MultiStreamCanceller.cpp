// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/MultiStreamCanceller.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace quell::engine {

void MultiStreamCanceller::prepare(const MultiStreamSettings& settings)
{
    if (settings.maxStreams < 1)
        throw std::invalid_argument("MultiStreamCanceller: at least one stream (got " + std::to_string(settings.maxStreams) + ")");
    aec::EchoCancellerSettings canceller = settings.canceller;
    if (canceller.taps == 0)
        canceller.taps = kDefaultTaps;
    canceller.cpuRealtimeBudget = 0.0;   // the CPU's choice is the offline one: the pool's threads carry the load
    canceller.cpuThreads = 1;            // each stream's CPU filter on the thread that runs the stream
    const std::size_t block = static_cast<std::size_t>(aec::segmentSamples(settings.sampleRate));
    const dsp::ProcessSpec spec{settings.sampleRate, block, settings.farEndChannels};
    // A lone canceller's Kalman filter is the CPU's; a batch of them runs on the GPU where the backend
    // allows it (kalmanOnGpu). The plan is the same either way; its block divides the calls, as the
    // GPU's must, so that a CPU batch of the same settings gives the same figures.
    const bool kalman = canceller.filter == aec::FilterKind::Kalman;
    const bool kalmanOnGpu = kalman && canceller.backend != aec::Backend::Cpu;
    aec::EchoCancellerSettings planSettings = canceller;
    if (kalman) {
        planSettings.backend = aec::Backend::Cpu;
        if (canceller.kalmanBlockSize == 0)
            canceller.kalmanBlockSize = planSettings.kalmanBlockSize = aec::kalmanBatchBlockSize(canceller.taps, block);
    }
    aec::FilterPlanResult planned = aec::planLinearFilter(planSettings, spec);
    if (planned.refusal == aec::FilterPlanResult::Refusal::GpuUnavailable)
        throw aec::BackendUnavailable(planned.whyNot);
    if (!planned.ok())
        throw std::invalid_argument(planned.whyNot);
    std::unique_ptr<aec::LinearFilterBatch> batch;
    try {
        batch = aec::makeLinearFilterBatch(planned.plan, settings.maxStreams, block, kalmanOnGpu);
    } catch (const std::invalid_argument& e) {
        // The GPU can run one such filter but not this batch (its memory, or for the Kalman filter no
        // GPU, a stereo far end, a block that does not divide the calls): Auto takes the CPU's.
        const bool gpuBatch = planned.plan.engine == aec::FilterEngine::GpuRls || kalmanOnGpu;
        if (canceller.backend != aec::Backend::Auto || !gpuBatch)
            throw aec::BackendUnavailable(e.what());
        canceller.backend = aec::Backend::Cpu;
        planSettings.backend = aec::Backend::Cpu;
        planned = aec::planLinearFilter(planSettings, spec);
        if (!planned.ok())
            throw std::invalid_argument(planned.whyNot);
        planned.plan.fallbackReason = e.what();
        batch = aec::makeLinearFilterBatch(planned.plan, settings.maxStreams, block);
    }
    std::vector<std::unique_ptr<aec::EchoCanceller>> cancellers;
    cancellers.reserve(static_cast<std::size_t>(settings.maxStreams));
    for (int s = 0; s < settings.maxStreams; ++s) {
        cancellers.push_back(std::make_unique<aec::EchoCanceller>());
        cancellers.back()->prepare(canceller, planned.plan, batch->slotFilter(s));
    }
    settings_ = settings;
    plan_ = planned.plan;
    block_ = block;
    cancellers_ = std::move(cancellers);   // before the batch they point into goes
    batch_ = std::move(batch);
    const std::size_t n = static_cast<std::size_t>(settings.maxStreams);
    isOpen_.assign(n, 0);
    idle_.assign(n, 1);
    calls_.assign(n, {});
    levels_.assign(n, {});
    levelRing_.assign(n * kErleBlocks * 2, 0.0);
    pool_ = std::make_unique<WorkerPool>(settings.threads, settings.threadPriority);
    open_ = 0;
}

int MultiStreamCanceller::open()
{
    for (std::size_t s = 0; s < isOpen_.size(); ++s)
        if (!isOpen_[s]) {
            cancellers_[s]->reset();   // the filter's stream too (its slot filter's reset)
            cancellers_[s]->setControls(cancellers_[s]->defaultControls());
            levels_[s] = {};
            isOpen_[s] = 1;
            ++open_;
            return static_cast<int>(s);
        }
    return -1;
}

void MultiStreamCanceller::close(int stream)
{
    if (!isOpen(stream))
        throw std::invalid_argument("MultiStreamCanceller::close: stream " + std::to_string(stream) + " is not open");
    isOpen_[static_cast<std::size_t>(stream)] = 0;
    --open_;
}

void MultiStreamCanceller::setControls(int stream, const aec::CancellerControls& controls)
{
    if (!isOpen(stream))
        throw std::invalid_argument("MultiStreamCanceller::setControls: stream " + std::to_string(stream) + " is not open");
    cancellers_[static_cast<std::size_t>(stream)]->setControls(controls);
}

std::optional<double> MultiStreamCanceller::erleDb(int stream) const
{
    if (stream < 0 || static_cast<std::size_t>(stream) >= levels_.size())
        throw std::out_of_range("MultiStreamCanceller::erleDb: no stream " + std::to_string(stream));
    const Levels& l = levels_[static_cast<std::size_t>(stream)];
    const double* ring = levelRing_.data() + static_cast<std::size_t>(stream) * kErleBlocks * 2;
    double mic = 0.0, out = 0.0;
    for (int i = 0; i < l.measured; ++i) {
        mic += ring[2 * i];
        out += ring[2 * i + 1];
    }
    if (!(mic > 0.0))
        return std::nullopt;
    return 10.0 * std::log10(mic / std::max(out, 1e-30));
}

void MultiStreamCanceller::measureInputs(const StreamBlock& b)
{
    Levels& l = levels_[static_cast<std::size_t>(b.stream)];
    double mic = 0.0, far = 0.0;
    for (std::size_t i = 0; i < block_; ++i)
        mic += double(b.mic[i]) * b.mic[i];
    for (int c = 0; c < settings_.farEndChannels; ++c)
        for (std::size_t i = 0; i < block_; ++i)
            far += double(b.ref[c][i]) * b.ref[c][i];
    l.blockMic = mic;
    l.blockFarMeanSquare = far / static_cast<double>(block_ * static_cast<std::size_t>(settings_.farEndChannels));
}

void MultiStreamCanceller::measureOutput(const StreamBlock& b)
{
    Levels& l = levels_[static_cast<std::size_t>(b.stream)];
    if (!(l.blockFarMeanSquare > 1e-6))   // -60 dBFS: a far end too quiet to echo
        return;
    double out = 0.0;
    for (std::size_t i = 0; i < block_; ++i)
        out += double(b.out[i]) * b.out[i];
    double* ring = levelRing_.data() + static_cast<std::size_t>(b.stream) * kErleBlocks * 2;
    ring[2 * l.next] = l.blockMic;
    ring[2 * l.next + 1] = out;
    l.next = (l.next + 1) % kErleBlocks;
    l.measured = std::min(l.measured + 1, kErleBlocks);
}

bool MultiStreamCanceller::isOpen(int stream) const
{
    return stream >= 0 && static_cast<std::size_t>(stream) < isOpen_.size() && isOpen_[static_cast<std::size_t>(stream)];
}

void MultiStreamCanceller::process(std::span<const StreamBlock> blocks)
{
    if (!batch_)
        throw std::logic_error("MultiStreamCanceller::process before prepare");
    std::fill(idle_.begin(), idle_.end(), 1);
    const std::size_t channels = static_cast<std::size_t>(settings_.farEndChannels);
    for (const StreamBlock& b : blocks) {
        if (!isOpen(b.stream))
            throw std::invalid_argument("MultiStreamCanceller::process: stream " + std::to_string(b.stream) + " is not open");
        bool given = b.mic != nullptr && b.out != nullptr;
        for (std::size_t c = 0; c < channels; ++c)
            given = given && b.ref[c] != nullptr;
        if (!given)
            throw std::invalid_argument("MultiStreamCanceller::process: stream " + std::to_string(b.stream)
                                        + "'s block lacks its microphone, output or a far-end channel");
        unsigned char& idle = idle_[static_cast<std::size_t>(b.stream)];
        if (!idle)
            throw std::invalid_argument("MultiStreamCanceller::process: stream " + std::to_string(b.stream) + " given twice");
        idle = 0;
    }
    const std::size_t n = block_;
    const bool byStream = batch_->parallelByStream();
    // After the filter: its errors into the canceller's output, the canceller's second half, the ERLE.
    auto finish = [&](std::size_t i, std::span<float> filterOut) {
        const int s = blocks[i].stream;
        std::copy_n(batch_->errorOut(s), n, filterOut.begin());
        cancellers_[static_cast<std::size_t>(s)]->finishBlock();
        measureOutput(blocks[i]);
    };
    using Clock = std::chrono::steady_clock;
    const auto us = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
    const Clock::time_point t0 = Clock::now();
    // Before the batch: each stream's canceller up to its filter, and the filter's inputs into the
    // batch's staging (on the CPU the stream's filter and the rest of its canceller too).
    pool_->run(blocks.size(), [&](std::size_t i) {
        const StreamBlock& b = blocks[i];
        const int s = b.stream;
        std::span<const float> refs[aec::kMaxFarEndChannels];
        for (std::size_t c = 0; c < channels; ++c)
            refs[c] = {b.ref[c], n};
        aec::EchoCanceller& canceller = *cancellers_[static_cast<std::size_t>(s)];
        measureInputs(b);
        const aec::EchoCanceller::FilterCall call = canceller.beginBlock({b.mic, n}, {refs, channels}, {b.out, n});
        std::copy(call.heard.begin(), call.heard.end(), batch_->micIn(s));
        std::copy(call.ref.begin(), call.ref.end(), batch_->refIn(s));
        if (byStream) {
            batch_->processStream(s, n);
            finish(i, call.out);
        } else {
            calls_[i] = call;
        }
    });
    const Clock::time_point t1 = Clock::now();
    if (byStream) {
        timing_ = {us(t0, t1), 0.0, 0.0};
        return;
    }
    batch_->process(n, idle_);
    const Clock::time_point t2 = Clock::now();
    pool_->run(blocks.size(), [&](std::size_t i) { finish(i, calls_[i].out); });
    timing_ = {us(t0, t1), us(t1, t2), us(t2, Clock::now())};
}

} // namespace quell::engine
