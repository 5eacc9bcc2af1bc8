#include "aec/EchoCanceller.h"

#include <algorithm>
#include <cmath>
#include <cstdio>


namespace quell::aec {

void EchoCanceller::prepare(const EchoCancellerSettings& requested, std::size_t maxBlock)
{
    FilterPlanResult planned = planLinearFilter(requested, maxBlock);
    if (planned.refusal == FilterPlanResult::Refusal::GpuUnavailable)
        throw BackendUnavailable(planned.whyNot);
    if (!planned.ok())
        throw std::invalid_argument(planned.whyNot);
    const FilterPlan& plan = planned.plan;
    EchoCancellerSettings settings = requested;
    settings.taps = plan.tapsPerChannel;
    const std::size_t channels = static_cast<std::size_t>(settings.farEndChannels);

    settings_ = settings;
    plan_ = plan;
    fallbackReason_ = plan.fallbackReason;
    filter_.reset();
    filter_ = makeLinearFilter(plan);
    description_ = filter_->description() + plan.choice;

    const dsp::Biquad hp = dsp::butterworthHighPass(settings.highPassHz, settings.sampleRate);
    micHighPass_.prepare(std::span<const dsp::Biquad>(&hp, 1));
    for (std::size_t c = 0; c < kMaxFarEndChannels; ++c)
        refHighPass_[c].prepare(std::span<const dsp::Biquad>(&hp, 1));
    if (settings.maxDelaySeconds > 0.0) {
        DelayEstimatorSettings d;
        d.sampleRate = settings.sampleRate;
        d.maxDelaySeconds = settings.maxDelaySeconds;
        delayEstimator_.prepare(d);
        delayLength_ = static_cast<std::size_t>(std::ceil(settings.maxDelaySeconds * settings.sampleRate)) + 1;
        refDelayLine_.assign(delayLength_ * channels, 0.0f);
    } else {
        refDelayLine_.clear();
    }
    ForegroundSettings fg;
    fg.taps = filter_->taps() * filter_->channels();
    fg.channels = settings.farEndChannels;
    fg.segmentSamples = std::max(1, settings.sampleRate / 100);
    foreground_.prepare(fg);
    if (settings.suppressor.enabled)
        suppressor_.prepare(settings.suppressor, settings.sampleRate);
    pathChange_.prepare({});
    gate_.prepare({});
    alignmentShift_.prepare({});
    guard_.prepare({}, settings.sampleRate);
    drift_.prepare(settings.drift, settings.sampleRate);
    driftWeights_.assign(static_cast<std::size_t>(filter_->taps() * filter_->channels()), 0.0f);
    controls_ = CancellerControls{};
    controls_.suppressionDb = settings.suppressor.maxAttenuationDb;
    controls_.comfortNoise = settings.suppressor.comfortNoise;
    maxBlock_ = maxBlock;
    micScratch_.assign(maxBlock, 0.0f);
    refScratch_.assign(maxBlock * channels, 0.0f);
    refInterleaved_.assign(channels > 1 ? maxBlock * channels : 0, 0.0f);
    downmix_.assign(channels > 1 ? maxBlock : 0, 0.0f);
    clearRunningState();
}

void EchoCanceller::reset()
{
    if (filter_) {
        filter_->reset();
        filter_->setAdaptation(true);
    }
    micHighPass_.reset();
    for (auto& f : refHighPass_)
        f.reset();
    if (!refDelayLine_.empty())
        delayEstimator_.reset();
    foreground_.reset();
    if (settings_.suppressor.enabled)
        suppressor_.reset();
    pathChange_.reset();
    gate_.reset();
    alignmentShift_.reset();
    guard_.reset();
    drift_.reset();
    clearRunningState();
}

void EchoCanceller::clearRunningState()
{
    std::fill(refDelayLine_.begin(), refDelayLine_.end(), 0.0f);
    delayWrite_ = 0;
    appliedDelay_ = 0;
    driftOffset_ = 0.0;
    segMic_ = segOut_ = segRef_ = segEstimate_ = 0.0;
    sinceDriftMeasure_ = 0;
    driftMic_ = driftOut_ = 0.0;
}

std::span<const float> EchoCanceller::farEndSum(std::size_t n)
{
    const std::size_t channels = static_cast<std::size_t>(settings_.farEndChannels);
    if (channels == 1)
        return {refScratch_.data(), n};
    for (std::size_t i = 0; i < n; ++i) {
        float acc = 0.0f;
        for (std::size_t c = 0; c < channels; ++c)
            acc += refScratch_[c * maxBlock_ + i];
        downmix_[i] = acc;
    }
    return {downmix_.data(), n};
}

void EchoCanceller::alignReference(std::span<const float> mic, std::size_t n)
{
    const std::size_t channels = static_cast<std::size_t>(settings_.farEndChannels);
    // One bulk delay for all loudspeakers (they share the playback path): found on their sum.
    delayEstimator_.process(mic, farEndSum(n));
    if (delayEstimator_.found()) {
        // The estimate is the strongest correlation, which is not always the direct path (a reflection,
        // or the far end's pitch period after it, can lead for a moment), and every move costs the
        // filter a restart. So the alignment moves only when the echo starts where the filter cannot
        // reach it well: before the margin (the direct path would fall off tap 0), or further in than
        // half the filter (or 1.5 margins for a filter shorter than that), where the pure delay wastes
        // taps the room's tail needs. And not at all while the weights that cancel now would lose part
        // of their path by it (AlignmentShift). Drift compensation moves the delay by itself; the
        // comparison is with where it has taken it.
        const int margin = static_cast<int>(std::lround(settings_.alignMarginSeconds * settings_.sampleRate));
        const int estimate = delayEstimator_.delaySamples();
        const int target = std::clamp(estimate - margin, 0, static_cast<int>(delayLength_) - 1);
        const long current = std::lround(appliedDelay_ + driftOffset_);
        const long into = estimate - current;
        const long tapsPerChannel = filter_->taps();
        const bool outOfReach = into < margin / 2 || into > std::max<long>(3 * margin / 2, tapsPerChannel / 2);
        if (target != current && outOfReach && shiftKeepsPath(target, static_cast<int>(target - current))) {
            appliedDelay_ = target;
            driftOffset_ = 0.0;
            drift_.forgetPositions();
            // What the filter learnt at the old alignment is wrong at the new one, and RLS with a long
            // memory would carry it for a second or more (10 dB of steady ERLE lost after the first
            // alignment of a delayed speech echo of the corpus): forget it. The foreground keeps
            // cancelling with what it has until the restarted filter does better.
            if (filter_)
                filter_->restartCovariance();
        }
    }
    const std::size_t len = delayLength_;
    const double rate = drift_.rate();
    const double lowest = FractionalDelayReader::kHalfLength, highest = static_cast<double>(len) - lowest - 1.0;
    // Fractional reads only where the reader has room on both sides of the delay.
    const bool fractional = (rate != 0.0 || driftOffset_ != 0.0) && appliedDelay_ >= lowest && appliedDelay_ <= highest;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t c = 0; c < channels; ++c)
            refDelayLine_[c * len + delayWrite_] = refScratch_[c * maxBlock_ + i];
        if (fractional) {
            driftOffset_ = std::clamp(driftOffset_ + rate, lowest - appliedDelay_, highest - appliedDelay_);
            for (std::size_t c = 0; c < channels; ++c)
                refScratch_[c * maxBlock_ + i] = fractional_.read(&refDelayLine_[c * len], len, delayWrite_, appliedDelay_ + driftOffset_);
        } else {
            const std::size_t read = (delayWrite_ + len - static_cast<std::size_t>(appliedDelay_)) % len;
            for (std::size_t c = 0; c < channels; ++c)
                refScratch_[c * maxBlock_ + i] = refDelayLine_[c * len + read];
        }
        delayWrite_ = delayWrite_ + 1 == len ? 0 : delayWrite_ + 1;
    }
}

bool EchoCanceller::shiftKeepsPath(long target, int shift)
{
    if (!alignmentShift_.cancelling())
        return true;
    // The weights that cancel now: the foreground's (host memory) when it makes the output, else the
    // adaptive filter's.
    std::span<const float> w = foreground_.weights();
    if (!settings_.twoPath && controls_.adapt) {
        filter_->copyWeights(driftWeights_);
        w = driftWeights_;
    }
    if (alignmentShift_.allows(w, settings_.farEndChannels, shift))
        return true;
    alignmentShift_.refused(target);
    return false;
}

void EchoCanceller::measureDrift(double micEnergy, double outEnergy, std::size_t samples)
{
    driftMic_ += micEnergy;
    driftOut_ += outEnergy;
    sinceDriftMeasure_ += static_cast<int>(samples);
    if (sinceDriftMeasure_ < drift_.measureInterval())
        return;
    // With two paths, the foreground's weights: host memory, a copy of the adaptive filter's that is
    // refreshed whenever the path has moved enough to matter; reading the adaptive filter itself would
    // cost the GPU a synchronous copy every measurement.
    std::span<const float> w = foreground_.weights();
    if (!settings_.twoPath) {
        filter_->copyWeights(driftWeights_);
        w = driftWeights_;
    }
    const std::size_t perChannel = w.size() / static_cast<std::size_t>(settings_.farEndChannels);
    const bool converged = driftMic_ > 2.0 * driftOut_ && driftOut_ > 0.0;
    drift_.measure(w.first(perChannel), converged);
    sinceDriftMeasure_ = 0;
    driftMic_ = driftOut_ = 0.0;
}

void EchoCanceller::process(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
{
    const std::span<const float> refs[1] = {ref};
    process(mic, std::span<const std::span<const float>>(refs), out);
}

void EchoCanceller::process(std::span<const float> mic, std::span<const std::span<const float>> refs,
                            std::span<float> out)
{
    const std::size_t channels = static_cast<std::size_t>(settings_.farEndChannels);
    if (refs.size() != channels)
        throw std::invalid_argument("EchoCanceller::process: " + std::to_string(refs.size()) + " far-end channels for a canceller of "
                                    + std::to_string(channels));
    for (const auto& ref : refs)
        if (ref.size() != mic.size())
            throw std::invalid_argument("EchoCanceller::process: mic, ref and out must have the same length");
    if (out.size() < mic.size())
        throw std::invalid_argument("EchoCanceller::process: mic, ref and out must have the same length");
    for (std::size_t pos = 0; pos < mic.size(); pos += maxBlock_) {
        const std::size_t n = std::min(maxBlock_, mic.size() - pos);
        std::span<float> m(micScratch_.data(), n);
        micHighPass_.process(mic.subspan(pos, n), m);
        for (std::size_t c = 0; c < channels; ++c)
            refHighPass_[c].process(refs[c].subspan(pos, n), std::span<float>(refScratch_.data() + c * maxBlock_, n));
        if (!refDelayLine_.empty())
            alignReference(m, n);
        // The far end as the filter sees it, for the suppressor's far-end model.
        const std::span<const float> farSum = farEndSum(n);
        // One channel is its own interleaved layout; more are interleaved for the filters.
        const float* interleaved = refScratch_.data();
        if (channels > 1) {
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t c = 0; c < channels; ++c)
                    refInterleaved_[i * channels + c] = refScratch_[c * maxBlock_ + i];
            interleaved = refInterleaved_.data();
        }
        const std::span<const float> r(interleaved, n * channels);
        const std::span<float> o = out.subspan(pos, n);
        // Segment by segment (the foreground's 10 ms), so that copies and restarts fall on the same
        // samples whatever the block size.
        for (std::size_t at = 0; at < n;) {
            const std::size_t k = std::min(n - at, static_cast<std::size_t>(foreground_.samplesToSegmentEnd()));
            const std::span<const float> mk = m.subspan(at, k), rk = r.subspan(at * channels, k * channels);
            const auto ok = o.subspan(at, k);
            if (channels == 1)
                filter_->process(mk, rk, ok);
            else
                filter_->processInterleaved(mk, rk, ok);
            if (settings_.twoPath || !controls_.adapt)
                foreground_.process(mk, rk, ok, ok, *filter_);
            else
                foreground_.skip(k);
            for (std::size_t i = 0; i < k; ++i) {
                segMic_ += double(mk[i]) * mk[i];
                segOut_ += double(ok[i]) * ok[i];
                const double estimate = double(mk[i]) - ok[i];
                segEstimate_ += estimate * estimate;
            }
            for (float x : rk)
                segRef_ += double(x) * x;
            at += k;
            if (foreground_.samplesToSegmentEnd() == foreground_.segmentSamples()) {
                if (settings_.drift.enabled && !refDelayLine_.empty())
                    measureDrift(segMic_, segOut_, static_cast<std::size_t>(foreground_.segmentSamples()));
                if (settings_.restartOnPathChange && settings_.farEndChannels == 1 && controls_.adapt
                    && pathChange_.segment(segMic_, segOut_, segEstimate_, segRef_, foreground_.segmentSamples())) {
                    filter_->restartCovariance();
                    foreground_.backgroundRestarted();
                }
                filter_->setAdaptation(gate_.segment(segMic_, segRef_, segOut_, segEstimate_));
                alignmentShift_.segment(segMic_, segOut_, segRef_, foreground_.segmentSamples());
                segMic_ = segOut_ = segRef_ = segEstimate_ = 0.0;
            }
        }
        guard_.process(m, o);
        if (settings_.suppressor.enabled)
            suppressor_.process(m, o, farSum, o);
    }
}

void EchoCanceller::setControls(const CancellerControls& c)
{
    if (!filter_)
        return;
    // Without the two-path scheme the foreground is idle until a freeze: it starts from the adaptive
    // filter's weights of that moment.
    if (controls_.adapt && !c.adapt && !settings_.twoPath)
        foreground_.copyFrom(*filter_);
    foreground_.setCopying(c.adapt);
    if (settings_.suppressor.enabled) {
        suppressor_.setMaxAttenuationDb(c.suppressionDb);
        suppressor_.setComfortNoise(c.comfortNoise);
    }
    controls_ = c;
}

std::vector<float> EchoCanceller::weights() const
{
    if (!filter_)
        return {};
    if (!controls_.adapt)
        return {foreground_.weights().begin(), foreground_.weights().end()};
    return filter_->weights();
}

} // namespace quell::aec
