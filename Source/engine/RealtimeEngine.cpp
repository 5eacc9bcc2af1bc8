// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/RealtimeEngine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>


namespace quell::engine {
namespace {

// A few hundred nanoseconds of busy waiting that keeps the core. Not sched_yield: with every core busy,
// a yield hands the core to another runnable thread for its whole slice (milliseconds), and quell-bench
// engine under a full CPU load saw the worker wait up to 6.6 ms for a block due inside its window.
void spinPause() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    for (int i = 0; i < 32; ++i)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
    for (int i = 0; i < 32; ++i)
        asm volatile("yield" ::: "memory");
#else
    std::this_thread::yield();
#endif
}

float toDb(double meanSquare) { return static_cast<float>(10.0 * std::log10(std::max(meanSquare, 1e-12))); }

} // namespace

int automaticSafetyBlocks(int hostRate, int hostBlock)
{
    return hostRate > 0 && 1000.0 * hostBlock / hostRate < 4.0 ? 1 : 0;
}

RealtimeEngine::RealtimeEngine() = default;

RealtimeEngine::~RealtimeEngine() { release(); }

void RealtimeEngine::prepare(const EngineSpec& spec)
{
    release();
    if (spec.maxHostBlock < 1 || spec.maxHostBlock > 8192)
        throw std::invalid_argument("host block size must be between 1 and 8192 samples (got "
                                    + std::to_string(spec.maxHostBlock) + ")");
    if (spec.safetyBlocks < 0 || spec.safetyBlocks > kMaxSafetyBlocks)
        throw std::invalid_argument("safety blocks must be between 0 and " + std::to_string(kMaxSafetyBlocks)
                                    + " (got " + std::to_string(spec.safetyBlocks) + ")");
    spec_ = spec;
    const std::size_t block = static_cast<std::size_t>(spec.maxHostBlock);
    const std::size_t channels = static_cast<std::size_t>(spec.micChannels);
    // A bad far-end channel count is refused by the canceller (pipeline_->prepare below) before any
    // buffer is sized with it.
    const std::size_t farChannels = static_cast<std::size_t>(spec.farEndChannels);
    stride_ = channels + farChannels;

    pipeline_ = std::make_unique<EchoPipeline>();
    pipeline_->prepare(pipelineSpec(spec.aec));
    appliedControls_ = controlsVersion_.load(std::memory_order_acquire);
    if (appliedControls_ != 0) {
        pipeline_->setControls(loadControls());
    }
    mode_ = pipeline_->canceller().backendDescription();
    fallbackReason_ = pipeline_->canceller().fallbackReason();
    onGpu_.store(pipeline_->canceller().onGpu());

    // One block of output is always in flight, S more with S safety blocks: output sample t carries
    // input sample t - (1 + S) maxHostBlock.
    baseLatency_ = spec.maxHostBlock + pipeline_->latencySamples();
    safetyBlocks_.store(spec.safetyBlocks, std::memory_order_relaxed);
    appliedSafety_ = spec.safetyBlocks;
    bridgeFrames_ = 0;
    input_.prepare(8 * block * stride_);
    output_.prepare((8 + kMaxSafetyBlocks) * block * channels);
    pushed_ = produced_ = cursor_ = 0;
    holes_.clear();
    holes_.reserve(256);
    degraded_ = false;

    interleaved_.assign(block * stride_, 0.0f);
    dryLine_.prepare(static_cast<int>(channels), baseLatency_ + kMaxSafetyBlocks * spec.maxHostBlock);

    const std::size_t most = block * kMaxBlocksPerCall;   // a call's frames (workerStep)
    workIn_.assign(most * stride_, 0.0f);
    workOut_.assign(most * channels, 0.0f);
    micScratch_.assign(channels, std::vector<float>(most, 0.0f));
    outScratch_.assign(channels, std::vector<float>(most, 0.0f));
    refScratch_.assign(farChannels, std::vector<float>(most, 0.0f));
    timeline_.prepare(1'000'000'000LL * spec.maxHostBlock / spec.hostRate);
    queuedFrames_ = pickedFrames_ = lastPickedFrames_ = 0;
    callbacks_ = lateBlocks_ = lateSamples_ = overruns_ = workerFrames_ = 0;
    meterMic_ = meterOut_ = meterRef_ = erleMic_ = erleOut_ = 0.0;
    fallbackGain_.prepare(spec.hostRate);
    meterFrames_ = 0;

    if (!spec.offline) {
        running_.store(true);
        worker_ = std::thread([this] { workerLoop(); });
    }
}

void RealtimeEngine::release()
{
    running_.store(false);
    if (worker_.joinable())
        worker_.join();
    delete pendingPipeline_.exchange(nullptr);
    pipeline_.reset();
    const std::lock_guard<std::mutex> lock(echoPathMutex_);
    echoPath_.clear();
}

PipelineSpec RealtimeEngine::pipelineSpec(const aec::EchoCancellerSettings& settings) const
{
    PipelineSpec ps;
    ps.hostRate = spec_.hostRate;
    ps.micChannels = spec_.micChannels;
    ps.farEndChannels = spec_.farEndChannels;
    ps.maxBlock = static_cast<std::size_t>(spec_.maxHostBlock) * kMaxBlocksPerCall;
    ps.cancellerRate = spec_.cancellerRate;
    ps.aec = settings;
    return ps;
}

void RealtimeEngine::setSafetyBlocks(int blocks)
{
    blocks = std::clamp(blocks, 0, kMaxSafetyBlocks);
    safetyBlocks_.store(blocks, std::memory_order_relaxed);
}

void RealtimeEngine::applySettings(const aec::EchoCancellerSettings& settings)
{
    // The channel layout, rates and block are prepare()'s; only the canceller's settings change.
    const PipelineSpec ps = pipelineSpec(settings);
    auto next = std::make_unique<EchoPipeline>();
    next->prepare(ps);
    if (next->latencySamples() != pipeline_->latencySamples())
        throw std::logic_error("applySettings would change the latency; prepare again instead");
    mode_ = next->canceller().backendDescription();
    fallbackReason_ = next->canceller().fallbackReason();   // the new backend's, not prepare()'s
    onGpu_.store(next->canceller().onGpu());
    spec_.aec = ps.aec;
    delete pendingPipeline_.exchange(next.release());
    if (spec_.offline)
        workerStep(); // picks the swap up at once
}

void RealtimeEngine::process(const float* const* mic, const float* const* refs, float* const* out, int n) noexcept
{
    const std::size_t farChannels = stride_ - static_cast<std::size_t>(spec_.micChannels);
    const std::size_t channels = static_cast<std::size_t>(spec_.micChannels);
    const std::size_t block = static_cast<std::size_t>(spec_.maxHostBlock);
    const int safety = safetyBlocks_.load(std::memory_order_relaxed);
    const std::int64_t delay = std::int64_t{spec_.maxHostBlock} * (1 + safety);
    const std::size_t latency = static_cast<std::size_t>(baseLatency_ + safety * spec_.maxHostBlock);
    // A change of the safety blocks moves the output by whole blocks: the step is bridged with what a
    // late block plays (a longer delay) or skips output (a shorter one); neither is a missed deadline.
    if (safety != appliedSafety_) {
        bridgeFrames_ = std::int64_t{std::abs(safety - appliedSafety_)} * spec_.maxHostBlock;
        appliedSafety_ = safety;
    }
    callbacks_.fetch_add(1, std::memory_order_relaxed);
    const std::int64_t enteredNs = BlockTimeline::nowNs();
    timeline_.callbackEntered(enteredNs);
    bool late = false;
    float frame[2];
    const float fallbackGain = fallbackGain_.gain();   // one for the callback: no step inside it
    for (std::size_t done = 0; done < static_cast<std::size_t>(std::max(n, 0));) {
        const std::size_t len = std::min(block, static_cast<std::size_t>(n) - done);
        // 1. Hand the inputs to the worker. If the worker has stalled for many blocks and the FIFO is
        //    full, the block becomes a hole: its output will be the fallback.
        for (std::size_t i = 0; i < len; ++i) {
            for (std::size_t c = 0; c < channels; ++c)
                interleaved_[i * stride_ + c] = mic[c][done + i];
            for (std::size_t r = 0; r < farChannels; ++r)
                interleaved_[i * stride_ + channels + r] = refs[r][done + i];
        }
        timeline_.queued(queuedFrames_, enteredNs);
        if (input_.write(interleaved_.data(), len * stride_)) {
            queuedFrames_ += static_cast<std::int64_t>(len);
        } else {
            overruns_.fetch_add(1, std::memory_order_relaxed);
            if (!holes_.empty() && holes_.back().start + holes_.back().length == pushed_)
                holes_.back().length += static_cast<std::int64_t>(len);
            else if (holes_.size() < holes_.capacity())
                holes_.push_back({pushed_, static_cast<std::int64_t>(len)});
            else
                degraded_ = true; // cannot track more holes: play the fallback from now on
        }
        pushed_ += static_cast<std::int64_t>(len);

        if (spec_.offline)
            while (workerStep()) {
            }

        // 2. Output sample t carries input sample t - delay. Worker output arrives in input order
        //    (holes skipped); anything older than what is due was already played as the fallback.
        for (std::size_t i = 0; i < len; ++i) {
            const std::int64_t due = produced_ - delay;
            for (std::size_t c = 0; c < channels; ++c)
                dryLine_.write(c, mic[c][done + i]);
            bool have = false;
            if (due < 0) {
                for (std::size_t c = 0; c < channels; ++c) frame[c] = 0.0f; // before the first input
                have = true;
            } else if (!degraded_) {
                for (;;) {
                    if (!holes_.empty() && cursor_ == holes_.front().start) {
                        cursor_ += holes_.front().length;
                        holes_.erase(holes_.begin());
                        continue;
                    }
                    if (cursor_ > due || output_.readAvailable() < channels)
                        break;
                    output_.read(frame, channels);
                    if (cursor_++ == due) {
                        have = true;
                        break;
                    }
                }
            }
            for (std::size_t c = 0; c < channels; ++c)
                out[c][done + i] = have ? frame[c] : fallbackGain * dryLine_.read(c, latency);
            if (bridgeFrames_ > 0) {
                --bridgeFrames_;
            } else if (!have) {
                late = true;
                lateSamples_.fetch_add(1, std::memory_order_relaxed);
            }
            dryLine_.advance();
            ++produced_;
        }
        done += len;
    }
    if (late)
        lateBlocks_.fetch_add(1, std::memory_order_relaxed);
}

aec::CancellerControls RealtimeEngine::loadControls() const
{
    aec::CancellerControls c;
    c.adapt = controlAdapt_.load(std::memory_order_relaxed);
    c.comfortNoise = controlComfortNoise_.load(std::memory_order_relaxed);
    c.suppressionDb = controlSuppressionDb_.load(std::memory_order_relaxed);
    return c;
}

void RealtimeEngine::setControls(const aec::CancellerControls& c)
{
    controlAdapt_.store(c.adapt, std::memory_order_relaxed);
    controlComfortNoise_.store(c.comfortNoise, std::memory_order_relaxed);
    controlSuppressionDb_.store(static_cast<float>(c.suppressionDb), std::memory_order_relaxed);
    controlsVersion_.fetch_add(1, std::memory_order_release);
}

bool RealtimeEngine::workerStep()
{
    bool swapped = false;
    if (EchoPipeline* next = pendingPipeline_.exchange(nullptr)) {
        pipeline_.reset(next);
        swapped = true;
    }
    // A new pipeline starts from its settings' defaults: the user's controls go on it too.
    const std::uint32_t version = controlsVersion_.load(std::memory_order_acquire);
    if (version != appliedControls_ || (swapped && version != 0)) {
        pipeline_->setControls(loadControls());
        appliedControls_ = version;
    }
    const std::size_t channels = static_cast<std::size_t>(spec_.micChannels);
    const std::size_t block = static_cast<std::size_t>(spec_.maxHostBlock);
    // Every block queued, up to kMaxBlocksPerCall: one when the worker keeps up, more after a slow one.
    // The samples do not depend on how the input is cut into calls.
    std::size_t frames = std::min<std::size_t>(input_.readAvailable() / stride_, block * kMaxBlocksPerCall);
    while (frames > 0 && output_.writeAvailable() < frames * channels)
        frames = frames > block ? frames - block : 0;   // the callback has not taken enough of the last output yet
    if (frames == 0)
        return false;
    const std::int64_t pickedNs = BlockTimeline::nowNs();
    const std::int64_t firstFrame = pickedFrames_;
    timeline_.picked(firstFrame, pickedNs, safetyBlocks());
    pickedFrames_ += static_cast<std::int64_t>(frames);
    lastPickedFrames_ = static_cast<std::int64_t>(std::min(frames, block));
    input_.read(workIn_.data(), frames * stride_);
    for (std::size_t i = 0; i < frames; ++i) {
        for (std::size_t c = 0; c < channels; ++c)
            micScratch_[c][i] = workIn_[i * stride_ + c];
        for (std::size_t r = 0; r < refScratch_.size(); ++r)
            refScratch_[r][i] = workIn_[i * stride_ + channels + r];
    }
    if (resetRequested_.exchange(false, std::memory_order_acq_rel)) {
        pipeline_->reset();
        fallbackGain_.reset();
    }

    std::span<const float> micSpans[2], refSpans[aec::kMaxFarEndChannels];
    std::span<float> outSpans[2];
    for (std::size_t r = 0; r < refScratch_.size(); ++r)
        refSpans[r] = std::span<const float>(refScratch_[r].data(), frames);
    for (std::size_t c = 0; c < channels; ++c) {
        micSpans[c] = std::span<const float>(micScratch_[c].data(), frames);
        outSpans[c] = std::span<float>(outScratch_[c].data(), frames);
    }
    const std::int64_t startNs = BlockTimeline::nowNs();
    pipeline_->process(std::span<const std::span<const float>>(micSpans, channels),
                       std::span<const std::span<const float>>(refSpans, refScratch_.size()),
                       std::span<const std::span<float>>(outSpans, channels));
    if (const long long delay = testDelayUs_.load(std::memory_order_relaxed); delay > 0)
        std::this_thread::sleep_for(std::chrono::microseconds(delay));
    const std::int64_t endNs = BlockTimeline::nowNs();
    timeline_.processed(startNs, endNs);

    updateMeters(frames);
    for (std::size_t i = 0; i < frames; ++i)
        for (std::size_t c = 0; c < channels; ++c)
            workOut_[i * channels + c] = outScratch_[c][i];
    output_.write(workOut_.data(), frames * channels);
    const std::int64_t publishedNs = BlockTimeline::nowNs();
    timeline_.published(publishedNs);
    // The timeline keeps a record per host block: the others of the call were picked, processed and
    // published with the first.
    for (std::size_t at = block; at < frames; at += block) {
        timeline_.picked(firstFrame + static_cast<std::int64_t>(at), pickedNs, safetyBlocks());
        timeline_.processed(startNs, endNs);
        timeline_.published(publishedNs);
    }
    workerFrames_.fetch_add(frames, std::memory_order_release);
    return true;
}

void RealtimeEngine::updateMeters(std::size_t frames)
{
    double mic = 0.0, out = 0.0, ref = 0.0;
    for (std::size_t i = 0; i < frames; ++i) {
        mic += static_cast<double>(micScratch_[0][i]) * micScratch_[0][i];
        out += static_cast<double>(outScratch_[0][i]) * outScratch_[0][i];
        ref += static_cast<double>(refScratch_[0][i]) * refScratch_[0][i];
    }
    fallbackGain_.observe(mic, out, frames);
    meterMic_ += mic;
    meterOut_ += out;
    meterRef_ += ref;
    meterFrames_ += frames;
    const std::size_t window = static_cast<std::size_t>(spec_.hostRate / 10);
    if (meterFrames_ < window)
        return;
    const double n = static_cast<double>(meterFrames_);
    micDb_.store(toDb(meterMic_ / n));
    outDb_.store(toDb(meterOut_ / n));
    refDb_.store(toDb(meterRef_ / n));
    // ERLE only over windows where the far end plays (above -50 dBFS), smoothed over ~0.5 s of them.
    if (meterRef_ / n > 1e-5) {
        erleMic_ = 0.8 * erleMic_ + 0.2 * meterMic_;
        erleOut_ = 0.8 * erleOut_ + 0.2 * meterOut_;
        erleDb_.store(static_cast<float>(10.0 * std::log10(std::max(erleMic_, 1e-20) / std::max(erleOut_, 1e-20))));
    }
    meterMic_ = meterOut_ = meterRef_ = 0.0;
    meterFrames_ = 0;
    driftPpm_.store(static_cast<float>(pipeline_->canceller().driftPpm()), std::memory_order_relaxed);
    if (snapshotsOn_.load(std::memory_order_relaxed)) {
        std::vector<float> w = pipeline_->canceller().weights();
        const std::lock_guard<std::mutex> lock(echoPathMutex_);
        echoPath_.swap(w);
    }
}

bool RealtimeEngine::echoPathSnapshot(std::vector<float>& out) const
{
    const std::lock_guard<std::mutex> lock(echoPathMutex_);
    if (echoPath_.empty())
        return false;
    out.assign(echoPath_.begin(), echoPath_.end());
    return true;
}

void RealtimeEngine::workerLoop()
{
    workerPriority_.store(raiseCurrentThreadPriority()); // best effort: see ThreadPriority.h
    using Wait = EngineSpec::WorkerWait;
    const auto poll = std::chrono::microseconds(100);
    while (running_.load(std::memory_order_acquire)) {
        if (workerStep())
            continue;
        if (spec_.workerWait == Wait::Spin) {
            std::this_thread::yield();
        } else if (spec_.workerWait == Wait::Poll) {
            std::this_thread::sleep_for(poll);
        } else {
            // The host calls again about one block after the last: spin within a margin of that moment,
            // poll outside it. Never one long sleep: a late callback is often followed by an early one
            // (the host keeps its own clock), which a sleep until "one block after the last" would miss
            // by the lateness (seen on JACK's dummy driver: 6 ms).
            const std::int64_t last = timeline_.lastQueuedNs();
            const std::int64_t duration = 1'000'000'000LL * lastPickedFrames_ / spec_.hostRate;
            const std::int64_t margin = std::min(duration, std::clamp<std::int64_t>(duration / 4, 200'000, 1'000'000));
            const std::int64_t now = BlockTimeline::nowNs(), expected = last + duration;
            if (last != 0 && now >= expected - margin && now <= expected + margin)
                spinPause();
            else
                std::this_thread::sleep_for(poll);
        }
    }
}

EngineStats RealtimeEngine::stats() const
{
    EngineStats s;
    s.callbacks = callbacks_.load();
    s.lateBlocks = lateBlocks_.load();
    s.lateSamples = lateSamples_.load();
    s.inputOverruns = overruns_.load();
    s.processing = timeline_.processing();
    s.timeline = timeline_.summary();
    s.workerPriority = workerPriority_.load();
    s.latencySamples = latencySamples();
    s.latencyMs = 1000.0 * s.latencySamples / spec_.hostRate;
    s.safetyBlocks = safetyBlocks();
    s.mode = mode_;
    s.onGpu = onGpu_.load();
    s.erleDb = erleDb_.load();
    s.driftPpm = driftPpm_.load(std::memory_order_relaxed);
    s.micLevelDb = micDb_.load();
    s.refLevelDb = refDb_.load();
    s.outLevelDb = outDb_.load();
    return s;
}

} // namespace quell::engine
