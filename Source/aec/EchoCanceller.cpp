#include "aec/EchoCanceller.h"

#include <algorithm>
#include <cmath>

#include "aec/CpuFilterChoice.h"

namespace quell::aec {

void EchoCanceller::prepare(const EchoCancellerSettings& settings, std::size_t maxBlock)
{
    if (settings.sampleRate < 8000 || settings.sampleRate > 192000)
        throw std::invalid_argument("echo canceller rate must be between 8000 and 192000 Hz (got "
                                    + std::to_string(settings.sampleRate) + ")");
    if (maxBlock == 0)
        throw std::invalid_argument("echo canceller: maxBlock must be positive");
    if (!(settings.maxDelaySeconds >= 0.0 && settings.maxDelaySeconds <= 4.0) || !(settings.alignMarginSeconds >= 0.0))
        throw std::invalid_argument("echo canceller: maxDelaySeconds must be in [0, 4] and alignMarginSeconds >= 0");
    dsp::RlsSettings rls;
    rls.taps = settings.taps;
    rls.lambda = settings.lambda;
    rls.delta = settings.delta;
    dsp::validate(rls);

    settings_ = settings;
    fallbackReason_.clear();
    filter_.reset();
    if (settings.backend != Backend::Cpu) {
        std::string whyNot;
        filter_ = makeGpuRlsFilter(rls, maxBlock, whyNot);
        if (!filter_) {
            if (settings.backend == Backend::Gpu)
                throw BackendUnavailable("--backend gpu: no usable GPU (" + whyNot + ")");
            fallbackReason_ = whyNot;
        }
    }
    if (!filter_ && settings.cpuRealtimeBudget > 0.0) {
        CpuFilterChoice choice = chooseRealtimeCpuFilter(rls, settings.sampleRate, settings.cpuRealtimeBudget);
        filter_ = std::move(choice.filter);
        description_ = choice.mode;
    } else {
        if (!filter_)
            filter_ = makeCpuRlsFilter(rls, settings.cpuThreads);
        description_ = filter_->description();
    }

    const dsp::Biquad hp = dsp::butterworthHighPass(settings.highPassHz, settings.sampleRate);
    micHighPass_.prepare(std::span<const dsp::Biquad>(&hp, 1));
    refHighPass_.prepare(std::span<const dsp::Biquad>(&hp, 1));
    if (settings.maxDelaySeconds > 0.0) {
        DelayEstimatorSettings d;
        d.sampleRate = settings.sampleRate;
        d.maxDelaySeconds = settings.maxDelaySeconds;
        delayEstimator_.prepare(d);
        refDelayLine_.assign(static_cast<std::size_t>(std::ceil(settings.maxDelaySeconds * settings.sampleRate)) + 1,
                             0.0f);
    } else {
        refDelayLine_.clear();
    }
    delayWrite_ = 0;
    appliedDelay_ = 0;
    ForegroundSettings fg;
    fg.taps = static_cast<int>(filter_->weights().size());
    fg.segmentSamples = std::max(1, settings.sampleRate / 100);
    foreground_.prepare(fg);
    if (settings.suppressor.enabled)
        suppressor_.prepare(settings.suppressor, settings.sampleRate);
    pathChange_.prepare({});
    segMic_ = segOut_ = segRef_ = 0.0;
    controls_ = CancellerControls{};
    controls_.suppressionDb = settings.suppressor.maxAttenuationDb;
    controls_.comfortNoise = settings.suppressor.comfortNoise;
    maxBlock_ = maxBlock;
    micScratch_.assign(maxBlock, 0.0f);
    refScratch_.assign(maxBlock, 0.0f);
}

void EchoCanceller::reset()
{
    if (filter_)
        filter_->reset();
    micHighPass_.reset();
    refHighPass_.reset();
    if (!refDelayLine_.empty()) {
        delayEstimator_.reset();
        std::fill(refDelayLine_.begin(), refDelayLine_.end(), 0.0f);
    }
    delayWrite_ = 0;
    appliedDelay_ = 0;
    foreground_.reset();
    if (settings_.suppressor.enabled)
        suppressor_.reset();
    pathChange_.reset();
    segMic_ = segOut_ = segRef_ = 0.0;
}

void EchoCanceller::alignReference(std::span<const float> mic, std::span<float> ref)
{
    delayEstimator_.process(mic, ref);
    if (delayEstimator_.found()) {
        // Moves smaller than half the margin keep the direct path inside the filter: not worth the
        // re-convergence a shift of the reference costs.
        const int margin = static_cast<int>(std::lround(settings_.alignMarginSeconds * settings_.sampleRate));
        const int target = std::clamp(delayEstimator_.delaySamples() - margin, 0,
                                      static_cast<int>(refDelayLine_.size()) - 1);
        if (std::abs(target - appliedDelay_) > margin / 2)
            appliedDelay_ = target;
    }
    const std::size_t len = refDelayLine_.size();
    for (float& r : ref) {
        refDelayLine_[delayWrite_] = r;
        const std::size_t read = (delayWrite_ + len - static_cast<std::size_t>(appliedDelay_)) % len;
        r = refDelayLine_[read];
        delayWrite_ = delayWrite_ + 1 == len ? 0 : delayWrite_ + 1;
    }
}

void EchoCanceller::process(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
{
    if (mic.size() != ref.size() || out.size() < mic.size())
        throw std::invalid_argument("EchoCanceller::process: mic, ref and out must have the same length");
    for (std::size_t pos = 0; pos < mic.size(); pos += maxBlock_) {
        const std::size_t n = std::min(maxBlock_, mic.size() - pos);
        std::span<float> m(micScratch_.data(), n), r(refScratch_.data(), n);
        micHighPass_.process(mic.subspan(pos, n), m);
        refHighPass_.process(ref.subspan(pos, n), r);
        if (!refDelayLine_.empty())
            alignReference(m, r);
        const std::span<float> o = out.subspan(pos, n);
        // Segment by segment (the foreground's 10 ms), so that copies and restarts fall on the same
        // samples whatever the block size.
        for (std::size_t at = 0; at < n;) {
            const std::size_t k = std::min(n - at, static_cast<std::size_t>(foreground_.samplesToSegmentEnd()));
            const auto mk = m.subspan(at, k), rk = r.subspan(at, k);
            const auto ok = o.subspan(at, k);
            filter_->process(mk, rk, ok);
            if (settings_.twoPath || !controls_.adapt)
                foreground_.process(mk, rk, ok, ok, *filter_);
            else
                foreground_.skip(k);
            for (std::size_t i = 0; i < k; ++i) {
                segMic_ += double(mk[i]) * mk[i];
                segOut_ += double(ok[i]) * ok[i];
                segRef_ += double(rk[i]) * rk[i];
            }
            at += k;
            if (foreground_.samplesToSegmentEnd() == foreground_.segmentSamples()) {
                if (settings_.restartOnPathChange && controls_.adapt
                    && pathChange_.segment(segMic_, segOut_, segRef_, foreground_.segmentSamples())) {
                    filter_->restartCovariance();
                    foreground_.backgroundRestarted();
                }
                segMic_ = segOut_ = segRef_ = 0.0;
            }
        }
        if (settings_.suppressor.enabled)
            suppressor_.process(m, o, o);
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
