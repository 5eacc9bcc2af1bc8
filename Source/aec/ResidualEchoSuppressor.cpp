// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/ResidualEchoSuppressor.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace quell::aec {
namespace {

// Band edges in Hz for the residual gains: about a third of an octave above 1 kHz, a few bins wide below
// (one bin alone gives a ratio too noisy to learn from).
constexpr double kBandEdgesHz[] = {250, 375, 500, 625, 875, 1125, 1500, 2000, 2625, 3375, 4375, 5625, 7125, 9000, 11500, 14500, 18500};

// The bands' mean ratio (of powers), in dB.
double meanDb(const ResidualGainTracker& tracker, std::size_t bands)
{
    double sum = 0.0;
    for (std::size_t b = 0; b < bands; ++b)
        sum += tracker.gain(b);
    return 10.0 * std::log10(std::max(sum / static_cast<double>(std::max<std::size_t>(1, bands)), 1e-6));
}

} // namespace

void ResidualEchoSuppressor::prepare(const SuppressorSettings& settings, const dsp::ProcessSpec& spec, int filterSamples)
{
    const int sampleRate = spec.sampleRate;
    if (sampleRate <= 0 || filterSamples < 0 || !(settings.frameSeconds > 0.0 && settings.frameSeconds <= 0.1)
        || !(settings.tailSeconds > 0.0) || !(settings.overSubtraction >= 1.0) || !(settings.maxAttenuationDb >= 0.0)
        || !(settings.fallbackDb >= 0.0) || !(settings.fallbackNearEndDb >= settings.fallbackDb) || !std::isfinite(settings.fallbackNearEndDb)
        || !std::isfinite(settings.fallbackNearEndAboveFloorDb) || !(settings.fallbackCoherence >= 0.0 && settings.fallbackCoherence <= 1.0) || !(std::abs(settings.farEndMinCorrelation) <= 1.0) || !(std::abs(settings.farEndMinMeanCorrelation) <= 1.0)
        || !(settings.weakFilterDb < settings.confidentFilterDb && settings.confidentFilterDb < settings.strongFilterDb)
        || !std::isfinite(settings.beyondFilterMinReachDb) || !(std::abs(settings.pathChangeCorrelation) <= 1.0)
        || !(settings.pathChangeSeconds >= 0.0 && settings.pathChangeSeconds <= 10.0)
        || !(settings.echoBurstSeconds > 0.0 && settings.echoBurstSeconds <= 10.0) || !(std::abs(settings.echoBurstCorrelation) <= 1.0)
        || !(settings.echoBurstMicShare >= 0.0) || !(std::abs(settings.echoBurstBandCorrelation) <= 1.0)
        || !(settings.echoBurstCoherence >= 0.0 && settings.echoBurstCoherence <= 1.0))
        throw std::invalid_argument("residual echo suppressor: bad settings");
    settings_ = settings;
    const double wanted = settings.frameSeconds * sampleRate;
    frame_ = 16;
    while (frame_ < wanted && frame_ < (1 << 14))
        frame_ *= 2;
    hop_ = frame_ / 2;
    bins_ = frame_ / 2 + 1;
    const std::size_t N = static_cast<std::size_t>(frame_), K = static_cast<std::size_t>(bins_);
    fft_ = std::make_unique<dsp::FftPlan<float>>(N);
    window_.resize(N);
    for (std::size_t n = 0; n < N; ++n)
        window_[n] = static_cast<float>(std::sqrt(0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * static_cast<double>(n) / frame_)));
    for (auto* v : {&micIn_, &errIn_, &farIn_, &overlap_})
        v->assign(N, 0.0f);
    ready_.assign(static_cast<std::size_t>(hop_), 0.0f);
    for (auto* v : {&spectrumE_, &spectrumD_, &spectrumX_})
        v->assign(N, {});
    for (auto* v : {&powerE_, &smoothedE_, &echoTail_, &farTail_})
        v->assign(K, 0.0f);
    gain_.assign(K, 1.0f);
    bandOf_.assign(K, 0);
    std::size_t band = 0;
    for (std::size_t k = 0; k < K; ++k) {
        const double hz = static_cast<double>(k) * sampleRate / frame_;
        while (band < std::size(kBandEdgesHz) && hz >= kBandEdgesHz[band])
            ++band;
        bandOf_[k] = band;
    }
    // Bands without a bin (a short frame at a low rate) are dropped by renumbering.
    std::vector<std::size_t> renumber(std::size(kBandEdgesHz) + 1, 0);
    std::size_t bands = 0;
    for (std::size_t k = 0; k < K; ++k) {
        if (k == 0 || bandOf_[k] != bandOf_[k - 1])
            renumber[bandOf_[k]] = bands++;
        bandOf_[k] = renumber[bandOf_[k]];
    }
    binsInBand_.assign(bands, 0);
    for (std::size_t k = 0; k < K; ++k)
        ++binsInBand_[bandOf_[k]];
    bandOut_.assign(bands, 0.0);
    bandEcho_.assign(bands, 0.0);
    bandFar_.assign(bands, 0.0);
    bandMic_.assign(bands, 0.0);
    for (auto* v : {&bandEchoNow_, &bandFarNow_, &bandFloor_, &bandRecent_, &bandSmoothed_, &bandFarResidual_})
        v->assign(bands, 0.0);
    for (FarModel& m : far_)
        for (auto* v : {&m.predictor, &m.present})
            v->assign(bands, 0.0);
    const double framesPerSecond = static_cast<double>(sampleRate) / hop_;
    // The linear estimate exists only where the filter found echo: whatever its statistics, it is used.
    ResidualGainSettings linear = settings.gains;
    linear.minVariation = 0.0;
    linear.presentFraction = 0.1;   // its predictor sums the tail: a steady sound is ~8 dB over its frame
    linearGain_.prepare(bands, framesPerSecond, linear);
    ResidualGainSettings farGains = settings.gains;
    farGains.minCorrelation = settings.farEndMinCorrelation;
    for (FarModel& m : far_)
        m.gain.prepare(bands, framesPerSecond, farGains);
    {
        // The tail's predictor is mostly decay (present only a filter length after each far-end frame):
        // learning needs only a tenth of it present.
        ResidualGainSettings beyondGains = settings.gains;
        beyondGains.presentFraction = 0.1;
        beyond_.gain.prepare(bands, framesPerSecond, beyondGains);
        beyond_.predictor.assign(bands, 0.0);
        beyond_.present.assign(bands, 0.0);
        historyFrames_ = settings.beyondFilterModel && filterSamples > 0 ? static_cast<std::size_t>(filterSamples / hop_) : 0;
        history_.assign(std::max<std::size_t>(historyFrames_, 1) * bands, 0.0);
    }
    recent_ = std::min(1.0, 1.0 / (0.016 * framesPerSecond));
    outputFollowing_.prepare(bands, framesPerSecond, settings.echoBurstSeconds);
    micFollowing_.prepare(bands, framesPerSecond, settings.echoBurstSeconds);
    outputCoherence_.prepare(bandOf_, framesPerSecond, settings.echoBurstSeconds);
    spectrumY_.assign(K, {});
    farMargin_ = std::pow(10.0, settings.farEndMarginDb / 10.0);
    // The tail follows the linear filter's room, not a device's wandering: the far-end margin without
    // the weak filter's share.
    tailMargin_ = farMargin_;
    reachFallDb_ = 2.0 / framesPerSecond;
    reachLostFallDb_ = settings.reachLostFallDbPerSecond / framesPerSecond;
    pathChangeWindowFrames_ = static_cast<int>(std::lround(settings.pathChangeSeconds * framesPerSecond));
    noise_.prepare(bins_, framesPerSecond);
    // Energy falls by 60 dB over tailSeconds.
    rho_ = static_cast<float>(std::pow(10.0, -6.0 / framesPerSecond / settings.tailSeconds));
    excess_.prepare(N, bandOf_, bands, rho_, framesPerSecond);
    fallbackRatio_ = static_cast<float>(std::pow(10.0, settings.fallbackDb / 10.0));
    fallbackNearEndRatio_ = static_cast<float>(std::pow(10.0, settings.fallbackNearEndDb / 10.0));
    nearEndAboveFloor_ = std::pow(10.0, settings.fallbackNearEndAboveFloorDb / 10.0);
    setMaxAttenuationDb(settings.maxAttenuationDb);
    comfortNoiseOn_ = settings.comfortNoise;
    reset();
}

void ResidualEchoSuppressor::reset()
{
    for (auto* v : {&micIn_, &errIn_, &farIn_, &overlap_, &ready_, &powerE_, &smoothedE_, &echoTail_, &farTail_})
        std::fill(v->begin(), v->end(), 0.0f);
    std::fill(gain_.begin(), gain_.end(), 1.0f);
    linearGain_.reset();
    for (FarModel& m : far_)
        m.gain.reset();
    beyond_.gain.reset();
    std::fill(beyond_.predictor.begin(), beyond_.predictor.end(), 0.0);
    std::fill(history_.begin(), history_.end(), 0.0);
    historyAt_ = 0;
    excess_.reset();
    std::fill(bandRecent_.begin(), bandRecent_.end(), 0.0);
    noise_.reset();
    filled_ = 0;
    reachDb_ = recentReductionDb_ = 0.0;
    farPlay_.reset();
    meanGain_ = 1.0f;
    fallbackFrames_ = 0;
    pathChangeFrames_ = 0;
    outputFollowing_.reset();
    micFollowing_.reset();
    outputCoherence_.reset();
    echoBurstNow_ = false;
    echoBurstFrames_ = 0;
}

void ResidualEchoSuppressor::setMaxAttenuationDb(double db)
{
    floorGain_ = static_cast<float>(std::pow(10.0, -std::clamp(db, 0.0, 80.0) / 20.0));
}

double ResidualEchoSuppressor::leakDb() const { return meanDb(linearGain_, bandOut_.size()); }
double ResidualEchoSuppressor::farEndGainDb() const { return meanDb(far_[0].gain, bandOut_.size()); }

void ResidualEchoSuppressor::updateFarPredictors(double farTotal, double farTotalNow)
{
    // 0: each band's far end; 1: the whole far end (distortion and rattle land in other bands than the
    // sound that drives them); 2, 3: what an overdriven loudspeaker adds, which grows faster than its
    // drive. (The squares of 0 and 1 over their mean were tried for that first: +6 dB of ERLE on the
    // corpus's tanh loudspeaker at 18 dB SDR, but 8 dB less in its linear rooms, where at every loud
    // syllable they took a converged filter's noise for echo; a clipper's excess is zero below its knee.)
    for (std::size_t b = 0; b < bandOut_.size(); ++b) {
        far_[0].predictor[b] = bandFar_[b];
        far_[0].present[b] = bandFarNow_[b];
        far_[1].predictor[b] = farTotal;
        far_[1].present[b] = farTotalNow;
        for (std::size_t j = 0; j < LoudspeakerExcessSpectrum::kClippers; ++j) {
            far_[2 + j].predictor[b] = excess_.held(j)[b];
            far_[2 + j].present[b] = excess_.present(j)[b];
        }
    }
    if (historyFrames_ > 0) {
        const std::size_t bands = bandOut_.size();
        double* slot = &history_[historyAt_ * bands];
        for (std::size_t b = 0; b < bands; ++b) {
            const double leaving = slot[b];   // the far end's band power historyFrames_ frames ago
            beyond_.present[b] = leaving;
            beyond_.predictor[b] = leaving + rho_ * beyond_.predictor[b];
            slot[b] = bandFarNow_[b];
        }
        historyAt_ = (historyAt_ + 1) % historyFrames_;
    }
}

void ResidualEchoSuppressor::process(std::span<const float> mic, std::span<const float> error,
                                     std::span<const float> farEnd, std::span<float> out)
{
    if (mic.size() != error.size() || farEnd.size() != mic.size() || out.size() < mic.size())
        throw std::invalid_argument("ResidualEchoSuppressor::process: lengths differ");
    const std::size_t tail = static_cast<std::size_t>(frame_ - hop_);
    for (std::size_t n = 0; n < mic.size(); ++n) {
        // The inputs are read before out[n] is written: out may alias them.
        const std::size_t at = tail + static_cast<std::size_t>(filled_);
        micIn_[at] = mic[n];
        errIn_[at] = error[n];
        farIn_[at] = farEnd[n];
        if (++filled_ == hop_) {
            processFrame();
            filled_ = 0;
        }
        out[n] = ready_[static_cast<std::size_t>(filled_)];
    }
}

void ResidualEchoSuppressor::processFrame()
{
    const std::size_t N = static_cast<std::size_t>(frame_), H = static_cast<std::size_t>(hop_),
                      K = static_cast<std::size_t>(bins_);
    for (std::size_t n = 0; n < N; ++n) {
        spectrumE_[n] = {errIn_[n] * window_[n], 0.0f};
        spectrumD_[n] = {micIn_[n] * window_[n], 0.0f};
        spectrumX_[n] = {farIn_[n] * window_[n], 0.0f};
    }
    fft_->transform(spectrumE_, false);
    fft_->transform(spectrumD_, false);
    fft_->transform(spectrumX_, false);
    excess_.update(farIn_, window_, H);

    // Output safety: a linear output louder than the microphone is worse than no linear filter at all.
    double sumE = 0.0, sumD = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
        sumE += std::norm(spectrumE_[k]);
        sumD += std::norm(spectrumD_[k]);
    }
    // The linear filter's reduction of what stands above the noise floor (of the last frame), at most
    // 40 dB: with the noise counted, a filter's reach would look no better than the echo-to-noise ratio.
    double sumFloor = 0.0;
    for (const float f : noise_.floor())
        sumFloor += f;
    const double frameReduction = 10.0 * std::log10(std::max(sumD - sumFloor, 1e-30) / std::max(sumE - sumFloor, 1e-30 + 1e-4 * sumD));
    // How much of the linear output is the echo estimate's sound (for the fallback below and the echo-burst
    // rule), before a fallback makes the output the microphone.
    for (std::size_t k = 0; k < K; ++k)
        spectrumY_[k] = spectrumD_[k] - spectrumE_[k];
    outputCoherence_.update(spectrumE_, spectrumY_);
    const bool nearEndTalks = sumFloor > 0.0 && sumE - sumFloor >= nearEndAboveFloor_ * sumFloor
                              && outputCoherence_.meanCoherence() < settings_.fallbackCoherence;
    if (sumE > (nearEndTalks ? fallbackNearEndRatio_ : fallbackRatio_) * sumD) {
        std::copy_n(spectrumD_.begin(), K, spectrumE_.begin());
        sumE = sumD;
        ++fallbackFrames_;
    }

    for (auto* v : {&bandOut_, &bandEcho_, &bandFar_, &bandEchoNow_, &bandFarNow_, &bandMic_})
        std::fill(v->begin(), v->end(), 0.0);
    for (std::size_t k = 0; k < K; ++k) {
        powerE_[k] = std::norm(spectrumE_[k]);
        const float echoNow = std::norm(spectrumD_[k] - spectrumE_[k]), farNow = std::norm(spectrumX_[k]);
        // The far end's power held at its peak and decaying at the room's rate: its level right at an
        // onset (the echo is there at once), the reverberation after it; a sum of the tail would put a
        // steady sound ~8 dB above its onset and make the residual's ratio swing with the phrase.
        const float echo = echoNow + rho_ * echoTail_[k], far = std::max(farNow, rho_ * farTail_[k]);
        echoTail_[k] = echo > 1e-30f ? echo : 0.0f;   // no denormals after long silence
        farTail_[k] = far > 1e-30f ? far : 0.0f;
        const std::size_t b = bandOf_[k];
        bandOut_[b] += powerE_[k];
        bandMic_[b] += std::norm(spectrumD_[k]);
        bandEcho_[b] += echoTail_[k];
        bandFar_[b] += farTail_[k];
        bandEchoNow_[b] += echoNow;
        bandFarNow_[b] += farNow;
    }
    double farTotal = 0.0, farTotalNow = 0.0;
    for (std::size_t b = 0; b < bandOut_.size(); ++b) {
        farTotal += bandFar_[b];
        farTotalNow += bandFarNow_[b];
        bandFloor_[b] = 0.0;
    }
    const bool farPlays = farPlay_.update(farTotalNow);
    if (pathChangeFrames_ > 0)
        --pathChangeFrames_;
    // A residual echo as long as the far end's speech is what a filter that does not yet model the echo
    // leaves; a confident one's output is the noise, whose floor must follow as before.
    noise_.track(powerE_, farPlays && reachDb_ < settings_.confidentFilterDb);
    const std::span<const float> floor = noise_.floor();
    // How the output and the microphone follow the far end now (bandRecent_ is still the last frame's here:
    // the output over 16 ms up to it), for the echo-burst rule (SuppressorSettings::echoBurst) alone.
    if (settings_.echoBurst) {
        outputFollowing_.update(bandRecent_, bandFar_);
        micFollowing_.update(bandMic_, bandFar_);
    }
    echoBurstNow_ = false;
    // How far the linear filter reaches: its reduction over a few frames while the far end plays, held at
    // its peak and falling by 2 dB/s (in double talk the near end's frames are lower; its pauses keep the
    // peak up). A filter that cannot model the echo (a device's distortion) stays within a few dB: the
    // far-end models then take a wider margin; one that converges reaches 20 dB within a fraction of a
    // second of far-end speech.
    if (farPlays) {
        recentReductionDb_ += 0.5 * (frameReduction - recentReductionDb_);
        const bool below = recentReductionDb_ < reachDb_ - settings_.reachLostDb;
        const double correlation = far_[0].gain.meanCorrelation();
        const double following = outputFollowing_.meanCorrelation();
        echoBurstNow_ = settings_.echoBurst && below && following >= settings_.echoBurstCorrelation
                        && following >= settings_.echoBurstMicShare * micFollowing_.meanCorrelation()
                        && correlation >= settings_.farEndMinMeanCorrelation
                        && outputCoherence_.meanCoherence() >= settings_.echoBurstCoherence;
        echoBurstFrames_ += echoBurstNow_ ? 1 : 0;
        const bool lost = below && correlation >= settings_.reachLostCorrelation;
        reachDb_ = std::max(recentReductionDb_, reachDb_ - (lost ? reachLostFallDb_ : reachFallDb_));
        if (pathChangeFrames_ > 0 && below && correlation >= settings_.pathChangeCorrelation && reachDb_ >= settings_.confidentFilterDb)
            reachDb_ = recentReductionDb_;
    }
    const double weakness = std::clamp((settings_.strongFilterDb - reachDb_) / (settings_.strongFilterDb - settings_.weakFilterDb), 0.0, 1.0);
    farMargin_ = std::pow(10.0, (settings_.farEndMarginDb + weakness * settings_.weakFilterMarginDb) / 10.0);
    updateFarPredictors(farTotal, farTotalNow);
    for (std::size_t k = 0; k < K; ++k)
        bandFloor_[bandOf_[k]] += floor[k];
    // What the trackers learn from: the output's band power over about 16 ms (one 4 ms frame of a band
    // fluctuates by several dB) above the noise floor; none where it is less than 3 dB above the floor:
    // there the output is the noise, and its fluctuations are no residual echo (counted as one, they made
    // the trackers suppress the noise of a converged filter's output).
    for (std::size_t b = 0; b < bandOut_.size(); ++b) {
        bandRecent_[b] += recent_ * (bandOut_[b] - bandRecent_[b]);
        bandOut_[b] = bandRecent_[b] > 2.0 * bandFloor_[b] ? bandRecent_[b] - bandFloor_[b] : 0.0;
    }
    linearGain_.update(bandOut_, bandEcho_, bandEchoNow_);
    for (FarModel& m : far_)
        m.gain.update(bandOut_, m.predictor, m.present);
    if (historyFrames_ > 0)
        beyond_.gain.update(bandOut_, beyond_.predictor, beyond_.present);

    const float over = static_cast<float>(settings_.overSubtraction);
    const float masking = static_cast<float>(settings_.masking);
    float gainSum = 0.0f;
    // The far-end models' residual and the output, per band: what they predict (distortion, rattle) does
    // not follow the far end's bins, so a band they call echo is suppressed as a whole. Of the residuals,
    // only what stands above the noise floor is taken for echo: the noise is there anyway, and the
    // trackers' quantiles carry some of its fluctuation.
    std::fill(bandSmoothed_.begin(), bandSmoothed_.end(), 0.0);
    for (std::size_t k = 0; k < K; ++k) {
        smoothedE_[k] = 0.5f * smoothedE_[k] + 0.5f * powerE_[k];
        bandSmoothed_[bandOf_[k]] += smoothedE_[k];
    }
    // A filter that reaches confidentFilterDb models the echo: the far-end models then need more evidence
    // (up to the linear model's correlation at strongFilterDb) and the loudspeaker's excesses are off.
    const double confidence = std::clamp((reachDb_ - settings_.confidentFilterDb) / (settings_.strongFilterDb - settings_.confidentFilterDb), 0.0, 1.0);
    const double bandCorrelation = settings_.farEndMinCorrelation + confidence * (settings_.gains.minCorrelation - settings_.farEndMinCorrelation);
    const std::size_t models = reachDb_ < settings_.confidentFilterDb ? far_.size() : 2;
    const bool beyondUsable = historyFrames_ > 0 && reachDb_ >= settings_.beyondFilterMinReachDb
                              && beyond_.gain.meanCorrelation() >= settings_.farEndMinMeanCorrelation;
    for (std::size_t b = 0; b < bandFarResidual_.size(); ++b) {
        double far = 0.0;
        for (std::size_t i = 0; i < models; ++i)
            if (const FarModel& m = far_[i]; m.gain.meanCorrelation() >= settings_.farEndMinMeanCorrelation && m.gain.correlation(b) >= bandCorrelation)
                far = std::max(far, m.gain.gain(b) * m.predictor[b]);
        far *= farMargin_;
        if (beyondUsable && beyond_.gain.correlation(b) >= bandCorrelation)
            far = std::max(far, tailMargin_ * beyond_.gain.gain(b) * beyond_.predictor[b]);
        if (echoBurstNow_ && outputFollowing_.correlation(b) >= settings_.echoBurstBandCorrelation)
            far = std::max(far, bandSmoothed_[b]);   // all of the band's output
        bandFarResidual_[b] = bandSmoothed_[b] > 0.0 ? std::max(0.0, far - bandFloor_[b]) / bandSmoothed_[b] : 0.0;
    }
    for (std::size_t k = 0; k < K; ++k) {
        const std::size_t b = bandOf_[k];
        const float linear = std::max(0.0f, static_cast<float>(linearGain_.gain(b)) * echoTail_[k] - floor[k]);
        const float ratio = std::max(smoothedE_[k] > 0.0f ? linear / smoothedE_[k] : 0.0f, static_cast<float>(bandFarResidual_[b]));
        // Residual more than `masking` (7 dB) below the output is masked by what else is there (near end, noise):
        // only the part above that is taken away, so a converged filter's output passes untouched.
        float g = 1.0f - over * std::max(0.0f, ratio - masking);
        g = std::clamp(g, floorGain_, 1.0f);
        // Falls at once (echo must not leak through at an onset), recovers over two frames.
        gain_[k] = g < gain_[k] ? g : gain_[k] + 0.5f * (g - gain_[k]);
        gain_[k] = std::max(gain_[k], floorGain_);   // the floor may have been raised since
        spectrumE_[k] *= gain_[k];
        gainSum += gain_[k];
    }
    meanGain_ = gainSum / static_cast<float>(K);
    if (comfortNoiseOn_)
        noise_.fill(std::span(spectrumE_).first(K), gain_);
    // Nothing of the suppressor's own, comfort noise included, makes the frame louder than both its inputs.
    double sumOut = 0.0;
    for (std::size_t k = 0; k < K; ++k)
        sumOut += std::norm(spectrumE_[k]);
    const double limit = std::max(sumD, sumE);
    if (sumOut > limit) {
        const float scale = sumOut > 0.0 ? static_cast<float>(std::sqrt(limit / sumOut)) : 0.0f;
        for (std::size_t k = 0; k < K; ++k)
            spectrumE_[k] *= scale;
    }
    for (std::size_t k = 1; k + 1 < K; ++k)
        spectrumE_[N - k] = std::conj(spectrumE_[k]);
    fft_->transform(spectrumE_, true);

    for (std::size_t n = 0; n < N; ++n)
        overlap_[n] += spectrumE_[n].real() * window_[n];
    std::copy_n(overlap_.begin(), H, ready_.begin());
    std::copy(overlap_.begin() + static_cast<std::ptrdiff_t>(H), overlap_.end(), overlap_.begin());
    std::fill(overlap_.end() - static_cast<std::ptrdiff_t>(H), overlap_.end(), 0.0f);
    for (auto* v : {&micIn_, &errIn_, &farIn_})
        std::copy(v->begin() + static_cast<std::ptrdiff_t>(H), v->end(), v->begin());
}

} // namespace quell::aec
