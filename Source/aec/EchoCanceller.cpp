// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/EchoCanceller.h"

#include <algorithm>
#include <cmath>
#include <cstdio>


namespace quell::aec {

void EchoCanceller::prepare(const EchoCancellerSettings& requested, const dsp::ProcessSpec& spec)
{
    FilterPlanResult planned = planLinearFilter(requested, spec);
    if (planned.refusal == FilterPlanResult::Refusal::GpuUnavailable)
        throw BackendUnavailable(planned.whyNot);
    if (!planned.ok())
        throw std::invalid_argument(planned.whyNot);
    filter_.reset();
    prepare(requested, planned.plan, makeLinearFilter(planned.plan));
}

void EchoCanceller::prepare(const EchoCancellerSettings& requested, const FilterPlan& plan, std::unique_ptr<LinearEchoFilter> filter)
{
    if (!filter || filter->taps() != plan.tapsPerChannel() || filter->channels() != plan.channels())
        throw std::invalid_argument("EchoCanceller::prepare: the filter does not match its plan");
    const dsp::ProcessSpec& spec = plan.spec;
    EchoCancellerSettings settings = requested;
    settings.taps = plan.tapsPerChannel();
    const std::size_t channels = static_cast<std::size_t>(spec.channels);
    const std::size_t maxBlock = spec.maximumBlockSize;

    settings_ = settings;
    plan_ = plan;
    filter_ = std::move(filter);
    description_ = filter_->description() + plan.choice;

    const dsp::Biquad hp = dsp::butterworthHighPass(settings.highPassHz, spec.sampleRate);
    micHighPass_.prepare(std::span<const dsp::Biquad>(&hp, 1));
    for (std::size_t c = 0; c < kMaxFarEndChannels; ++c)
        refHighPass_[c].prepare(std::span<const dsp::Biquad>(&hp, 1));
    AlignerSettings align;
    align.maxDelaySeconds = settings.maxDelaySeconds;
    align.marginSeconds = settings.alignMarginSeconds;
    align.drift = settings.drift;
    align.echoStartFraction = plan.alignEchoStartFraction();
    aligner_.prepare(align, spec);
    const ForegroundSettings fg = plan.foregroundSettings(segmentSamples(spec.sampleRate));
    foreground_.prepare(fg);
    if (settings.suppressor.enabled) {
        suppressor_.prepare(settings.suppressor, spec, filter_->taps());
        suppressorFar_.prepare(1, filter_->taps());
        suppressorFarScratch_.assign(maxBlock, 0.0f);
    }
    suppressorFarSilent_.assign(maxBlock, 0);
    suppressorFarLag_.assign(maxBlock, 0);
    suppressorPathChanges_.assign(maxBlock / static_cast<std::size_t>(segmentSamples(spec.sampleRate)) + 2, 0);
    suppressorPathChangeCount_ = 0;
    pathChange_.prepare({});
    gate_.prepare({});
    levelMatch_.prepare(plan.rls.delta);
    guard_.prepare({}, spec);
    if (settings.distortionFilter) {
        DistortionFilterSettings distortion;
        distortion.tapsPerChannel = fg.tapsPerChannel;
        distortion.segmentSamples = fg.segmentSamples;
        distortion_.prepare(distortion, spec);
    }
    cancelWeights_.assign(static_cast<std::size_t>(filter_->taps() * filter_->channels()), 0.0f);
    controls_ = defaultControls();
    micScratch_.assign(maxBlock, 0.0f);
    micLessDistortion_.assign(settings.distortionFilter ? maxBlock : 0, 0.0f);
    distortionScratch_.assign(settings.distortionFilter ? maxBlock : 0, 0.0f);
    backgroundScratch_.assign(maxBlock, 0.0f);
    weightsAtSplit_.assign(static_cast<std::size_t>(filter_->taps() * filter_->channels()), 0.0f);
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
    aligner_.reset();
    foreground_.reset();
    if (settings_.suppressor.enabled) {
        suppressor_.reset();
        suppressorFar_.reset();
    }
    pathChange_.reset();
    suppressorPathChangeCount_ = 0;
    gate_.reset();
    levelMatch_.reset();
    guard_.reset();
    if (settings_.distortionFilter)
        distortion_.reset();
    clearRunningState();
}

void EchoCanceller::clearRunningState()
{
    pendingBlock_ = {};
    segMic_ = segOut_ = segRef_ = segEstimate_ = 0.0;
    adapting_ = true;
}

std::span<const float> EchoCanceller::farEndSum(std::size_t at, std::size_t k)
{
    const std::size_t channels = static_cast<std::size_t>(plan_.spec.channels);
    if (channels == 1)
        return {refScratch_.data() + at, k};
    for (std::size_t i = at; i < at + k; ++i) {
        float acc = 0.0f;
        for (std::size_t c = 0; c < channels; ++c)
            acc += refScratch_[c * plan_.spec.maximumBlockSize + i];
        downmix_[i] = acc;
    }
    return {downmix_.data() + at, k};
}

std::span<const float> EchoCanceller::cancellingWeights()
{
    if (foregroundMakesOutput())
        return foreground_.weights();
    filter_->copyWeights(cancelWeights_);
    return cancelWeights_;
}

void EchoCanceller::process(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
{
    const std::span<const float> refs[1] = {ref};
    process(mic, std::span<const std::span<const float>>(refs), out);
}

CancellerControls EchoCanceller::defaultControls() const
{
    CancellerControls c;
    c.suppressionDb = settings_.suppressor.maxAttenuationDb;
    c.comfortNoise = settings_.suppressor.comfortNoise;
    return c;
}

void EchoCanceller::checkInputs(const char* caller, std::span<const float> mic, std::span<const std::span<const float>> refs) const
{
    const std::size_t channels = static_cast<std::size_t>(plan_.spec.channels);
    if (refs.size() != channels)
        throw std::invalid_argument(std::string(caller) + ": " + std::to_string(refs.size()) + " far-end channels for a canceller of "
                                    + std::to_string(channels));
    for (const auto& ref : refs)
        if (ref.size() != mic.size())
            throw std::invalid_argument(std::string(caller) + ": mic, ref and out must have the same length");
}

std::span<const float> EchoCanceller::filterFarEnd(std::size_t n) const
{
    const std::size_t channels = static_cast<std::size_t>(plan_.spec.channels);
    return {channels > 1 ? refInterleaved_.data() : refScratch_.data(), n * channels};
}

void EchoCanceller::process(std::span<const float> mic, std::span<const std::span<const float>> refs,
                            std::span<float> out)
{
    checkInputs("EchoCanceller::process", mic, refs);
    if (out.size() < mic.size())
        throw std::invalid_argument("EchoCanceller::process: mic, ref and out must have the same length");
    for (std::size_t pos = 0; pos < mic.size(); pos += plan_.spec.maximumBlockSize) {
        const std::size_t n = std::min(plan_.spec.maximumBlockSize, mic.size() - pos);
        const std::span<const float> m = highPassInputs(mic, refs, pos, n);
        const std::span<const float> r = filterFarEnd(n);
        const std::span<float> o = out.subspan(pos, n);
        // Segment by segment (the foreground's 10 ms), so that copies and restarts fall on the same
        // samples whatever the block size.
        for (std::size_t at = 0; at < n;) {
            const std::size_t k = std::min(n - at, static_cast<std::size_t>(foreground_.samplesToSegmentEnd()));
            if (at + k < n && foregroundMakesOutput()) {
                const std::size_t after = std::min(n - at - k, static_cast<std::size_t>(foreground_.segmentSamples()));
                processAcrossSegmentEnd(m, r, o, at, k, after);
                at += k + after;
            } else {
                processWithinSegment(m, r, o, at, k);
                at += k;
            }
        }
        finishOutput(m, o);
    }
}

std::span<const float> EchoCanceller::highPassInputs(std::span<const float> mic, std::span<const std::span<const float>> refs,
                                                     std::size_t pos, std::size_t n)
{
    const std::span<float> m(micScratch_.data(), n);
    micHighPass_.process(mic.subspan(pos, n), m);
    for (std::size_t c = 0; c < refs.size(); ++c)
        refHighPass_[c].process(refs[c].subspan(pos, n), std::span<float>(refScratch_.data() + c * plan_.spec.maximumBlockSize, n));
    return m;
}

EchoCanceller::FilterCall EchoCanceller::beginBlock(std::span<const float> mic, std::span<const std::span<const float>> refs,
                                                    std::span<float> out)
{
    const std::size_t n = mic.size();
    checkInputs("EchoCanceller::beginBlock", mic, refs);
    if (out.size() != n)
        throw std::invalid_argument("EchoCanceller::beginBlock: mic, ref and out must have the same length");
    if (n == 0 || n > static_cast<std::size_t>(foreground_.samplesToSegmentEnd()) || n > plan_.spec.maximumBlockSize)
        throw std::invalid_argument("EchoCanceller::beginBlock: a block of " + std::to_string(n) + " samples where "
                                    + std::to_string(foreground_.samplesToSegmentEnd()) + " are left in the segment");
    if (pendingBlock_.open)
        throw std::logic_error("EchoCanceller::beginBlock: the last block has not been finished");
    const std::span<const float> m = highPassInputs(mic, refs, 0, n);
    const std::span<const float> r = filterFarEnd(n);
    const std::span<const float> heard = beginWithinSegment(m, r, 0, n);
    pendingBlock_ = PendingBlock{true, n, heard, out};
    return FilterCall{heard, r, out};
}

void EchoCanceller::finishBlock()
{
    if (!pendingBlock_.open)
        throw std::logic_error("EchoCanceller::finishBlock: no block begun");
    const std::size_t n = pendingBlock_.samples;
    const std::span<const float> m(micScratch_.data(), n);
    finishWithinSegment(m, filterFarEnd(n), pendingBlock_.out, 0, n, pendingBlock_.heard);
    finishOutput(m, pendingBlock_.out);
    pendingBlock_ = {};
}

void EchoCanceller::finishOutput(std::span<const float> m, std::span<float> o)
{
    const std::size_t n = m.size();
    guard_.process(m, o);
    if (settings_.suppressor.enabled) {
        // The far end as the filter saw it; the suppressor's far-end model takes it by the echo's lag.
        const std::span<const float> farSum = farEndSum(0, n);
        // The far end waits for the echo by the lag in force at each sample, in runs of one lag.
        float* lagged = suppressorFarScratch_.data();
        for (std::size_t from = 0; from < n;) {
            std::size_t to = from + 1;
            while (to < n && suppressorFarLag_[to] == suppressorFarLag_[from])
                ++to;
            const float* in = farSum.data() + from;
            float* into = lagged + from;
            const int lag = std::min(suppressorFarLag_[from], suppressorFar_.maxDelay());
            suppressorFar_.process(&in, &into, 1, to - from, static_cast<std::size_t>(lag));
            from = to;
        }
        // Until a filter has cancelled, a far end the gate finds unable to make an echo that could be
        // heard is silence to the suppressor too: its far-end models learnt from a line's noise at
        // -70 dBFS under a talking near end (their gains fell to nothing in its pauses, their bands'
        // statistics took the near end's speech), and when the far end began the echo was left for a
        // second or more. After, the far end is the suppressor's whatever the gate says. A segment's
        // samples take the gate's verdict on that segment, or, where the segment has not ended in this
        // call, the verdict before it (markSuppressorFar, markConcludedSegment). A verdict once per
        // call, at its end, for all of the call's samples (as before) depended on where the host's
        // calls end; the verdict before each segment alone was late where a far end starts (echo
        // reduction 11.8 dB against 25.8 after a faint line, Tests/cpu/AdaptationGateTests).
        for (std::size_t i = 0; i < n; ++i)
            if (suppressorFarSilent_[i])
                lagged[i] = 0.0f;
        // A path change concluded inside the block reaches the suppressor at its sample: told at the
        // block's end, the suppressor had dropped its reach for the block's earlier frames too, as a
        // block of one sample would not (the same recording gave other samples in host blocks of 4096
        // and of 160 after a false path change in double talk).
        std::size_t from = 0;
        for (std::size_t c = 0; c < suppressorPathChangeCount_; ++c) {
            const std::size_t at = suppressorPathChanges_[c];
            suppressor_.process(m.subspan(from, at - from), o.subspan(from, at - from), std::span<const float>(lagged + from, at - from),
                                o.subspan(from, at - from));
            suppressor_.echoPathChanged();
            from = at;
        }
        suppressor_.process(m.subspan(from), o.subspan(from), std::span<const float>(lagged + from, n - from), o.subspan(from));
    }
    suppressorPathChangeCount_ = 0;
}

std::span<const float> EchoCanceller::heardPart(std::span<const float> m, std::span<const float> r, std::size_t at, std::size_t k)
{
    // The loudspeaker's distortion, as far as it is fitted, comes off the microphone before the linear
    // filters: they then learn the room from an echo their model explains (fitting it after them instead
    // took 3 dB off the distortion, 18 dB under the echo: the filter that gives the distortion's
    // regressors their room had itself been pulled by it).
    const std::size_t channels = static_cast<std::size_t>(plan_.spec.channels);
    const std::span<const float> mk = m.subspan(at, k), rk = r.subspan(at * channels, k * channels);
    if (settings_.distortionFilter && foregroundMakesOutput()) {
        const std::span<float> nl(distortionScratch_.data() + at, k);
        distortion_.estimate(rk, foreground_.weights(), nl);
        for (std::size_t i = 0; i < k; ++i)
            micLessDistortion_[at + i] = mk[i] - nl[i];
        return {micLessDistortion_.data() + at, k};
    }
    if (settings_.distortionFilter)
        distortion_.skip(rk);   // its far-end history stays current for when the foreground is back
    return mk;
}

void EchoCanceller::observeOutput(std::span<const float> mk, std::span<const float> rk, std::span<const float> ok)
{
    if (settings_.distortionFilter && foregroundMakesOutput())
        distortion_.observe(mk, ok);
    for (std::size_t i = 0; i < mk.size(); ++i) {
        segMic_ += double(mk[i]) * mk[i];
        segOut_ += double(ok[i]) * ok[i];
        const double estimate = double(mk[i]) - ok[i];
        segEstimate_ += estimate * estimate;
    }
    for (float x : rk)
        segRef_ += double(x) * x;
}

EchoCanceller::SegmentVerdict EchoCanceller::concludeSegment()
{
    aligner_.segment(segMic_, segOut_, segRef_, foreground_.segmentSamples(), *this);
    const bool pathChanged = settings_.restartOnPathChange && plan_.spec.channels == 1 && controls_.adapt
                             && pathChange_.segment(segMic_, segOut_, segEstimate_, segRef_, foreground_.segmentSamples());
    const bool learnt = adapting_ && controls_.adapt;
    adapting_ = gate_.segment(segMic_, segRef_, segOut_, segEstimate_);
    if (settings_.distortionFilter)
        distortion_.segmentEnd(learnt, adapting_ && controls_.adapt);
    // The filter learnt from the segment if it adapted through it (the gate's verdict of the last segment).
    FarEndLevelMatch::Segment level;
    level.farPower = segRef_ / (double(foreground_.segmentSamples()) * plan_.spec.channels);
    level.micEnergy = segMic_;
    level.outEnergy = segOut_;
    level.learnt = learnt;
    FarEndLevelMatch::Decision matched = levelMatch_.segment(level);
    if (matched.newDelta && !filter_->setRestartDelta(levelMatch_.delta()))
        matched.restart = false;   // a filter with no delta to match gains nothing from the restart
    segMic_ = segOut_ = segRef_ = segEstimate_ = 0.0;
    return {pathChanged, pathChanged || matched.restart};
}

void EchoCanceller::processWithinSegment(std::span<const float> m, std::span<const float> r, std::span<float> o, std::size_t at,
                                         std::size_t k)
{
    const std::size_t channels = static_cast<std::size_t>(plan_.spec.channels);
    const std::span<const float> heard = beginWithinSegment(m, r, at, k);
    filter_->processChannels(heard, r.subspan(at * channels, k * channels), o.subspan(at, k));
    finishWithinSegment(m, r, o, at, k, heard);
}

std::span<const float> EchoCanceller::beginWithinSegment(std::span<const float> m, std::span<const float> r, std::size_t at, std::size_t k)
{
    alignFarEnd(m, at, k);
    const std::span<const float> heard = heardPart(m, r, at, k);
    markSuppressorFar(at, k);
    return heard;
}

void EchoCanceller::finishWithinSegment(std::span<const float> m, std::span<const float> r, std::span<float> o, std::size_t at,
                                        std::size_t k, std::span<const float> heard)
{
    const std::size_t channels = static_cast<std::size_t>(plan_.spec.channels);
    const std::span<const float> mk = m.subspan(at, k), rk = r.subspan(at * channels, k * channels);
    const std::span<float> ok = o.subspan(at, k);
    if (foregroundMakesOutput())
        foreground_.process(heard, rk, ok, ok, *filter_);
    else
        foreground_.skip(k);
    observeOutput(mk, rk, ok);
    endSegmentIfDue(at + k);
}

void EchoCanceller::markConcludedSegment(std::size_t end)
{
    // The segment's own verdict for its samples in this block (those of an earlier call have gone).
    const std::size_t segment = static_cast<std::size_t>(foreground_.segmentSamples());
    markSuppressorFar(end > segment ? end - segment : 0, end > segment ? segment : end);
}

void EchoCanceller::alignFarEnd(std::span<const float> m, std::size_t at, std::size_t k)
{
    const std::size_t channels = static_cast<std::size_t>(plan_.spec.channels), stride = plan_.spec.maximumBlockSize;
    // The estimator hears the far end's channel sum as it comes, before the delay.
    if (aligner_.active())
        aligner_.feed(m.subspan(at, k), farEndSum(at, k), refScratch_.data() + at, stride, k);
    // One channel is its own interleaved layout; more are interleaved for the filters.
    if (channels > 1)
        for (std::size_t i = at; i < at + k; ++i)
            for (std::size_t c = 0; c < channels; ++c)
                refInterleaved_[i * channels + c] = refScratch_[c * stride + i];
}

void EchoCanceller::markSuppressorFar(std::size_t at, std::size_t k)
{
    const unsigned char silent = !adapting_ && !gate_.gainMeasured() ? 1 : 0;
    std::fill_n(suppressorFarSilent_.begin() + static_cast<std::ptrdiff_t>(at), k, silent);
    std::fill_n(suppressorFarLag_.begin() + static_cast<std::ptrdiff_t>(at), k, aligner_.echoLag());
}

void EchoCanceller::endSegmentIfDue(std::size_t end)
{
    if (foreground_.samplesToSegmentEnd() != foreground_.segmentSamples())
        return;
    const SegmentVerdict verdict = concludeSegment();
    markConcludedSegment(end);
    if (verdict.restart)
        filter_->restartCovariance();
    if (verdict.pathChanged)
        backgroundRestarted(end);
    // The filter forgets what it learnt at the old alignment when the far end moves: RLS with a long
    // memory would carry it for a second or more (10 dB of steady ERLE lost after the first alignment
    // of a delayed speech echo of the corpus). The foreground keeps cancelling with what it has until
    // the restarted filter does better.
    if (aligner_.decide(*this))
        filter_->restartCovariance();
    filter_->setAdaptation(adapting_);
}

void EchoCanceller::backgroundRestarted(std::size_t at)
{
    foreground_.backgroundRestarted();
    if (settings_.suppressor.enabled && suppressorPathChangeCount_ < suppressorPathChanges_.size())
        suppressorPathChanges_[suppressorPathChangeCount_++] = at;
}

void EchoCanceller::processAcrossSegmentEnd(std::span<const float> m, std::span<const float> r, std::span<float> o, std::size_t at,
                                            std::size_t before, std::size_t after)
{
    // The foreground makes the output, so everything the segment's end decides for the adaptive filter
    // (the gate's verdict, a path change's restart) follows from the foreground's output and not from
    // the filter's: the foreground runs ahead to the segment's end, the decisions are taken, and the
    // filter then runs over both sides in one call (on the GPU one round trip to the device, where
    // separate calls cost a round trip each and, on a GPU another process uses, a time slice each:
    // Source/engine/NOTES.md). Only the foreground's own snapshot decision needs the filter's error; it
    // comes after the call, with the filter's weights as they were at the segment's end. The samples and
    // every decision are those of processWithinSegment over the two parts.
    const std::size_t channels = static_cast<std::size_t>(plan_.spec.channels);
    const std::size_t n = before + after;
    alignFarEnd(m, at, before);
    const std::span<const float> heardBefore = heardPart(m, r, at, before);
    const std::span<const float> mb = m.subspan(at, before), rb = r.subspan(at * channels, before * channels);
    const std::span<float> ob = o.subspan(at, before);
    markSuppressorFar(at, before);
    foreground_.processAhead(heardBefore, rb, ob);
    observeOutput(mb, rb, ob);
    const SegmentVerdict verdict = concludeSegment();
    markConcludedSegment(at + before);
    const bool moved = aligner_.decide(*this);   // (as endSegmentIfDue)
    alignFarEnd(m, at + before, after);
    markSuppressorFar(at + before, after);
    const std::span<const float> heardAfter = heardPart(m, r, at + before, after);
    // One span for the filter: both parts are the microphone's samples, or both the distortion's remainder.
    const std::span<const float> heard(heardBefore.data(), n);
    const std::span<float> background(backgroundScratch_.data(), n);
    filter_->processSplit(heard, r.subspan(at * channels, n * channels), background, before, verdict.restart || moved, adapting_,
                          weightsAtSplit_);
    foreground_.catchUp(background.first(before), weightsAtSplit_);
    if (verdict.pathChanged)
        backgroundRestarted(at + before);
    const std::span<const float> ma = m.subspan(at + before, after), ra = r.subspan((at + before) * channels, after * channels);
    const std::span<float> oa = o.subspan(at + before, after);
    std::copy(background.begin() + static_cast<std::ptrdiff_t>(before), background.end(), oa.begin());
    foreground_.process(heardAfter, ra, oa, oa, *filter_);
    observeOutput(ma, ra, oa);
    endSegmentIfDue(at + before + after);
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
