#include "aec/ResidualEchoSuppressor.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace quell::aec {

void ResidualEchoSuppressor::prepare(const SuppressorSettings& settings, int sampleRate)
{
    if (sampleRate <= 0 || !(settings.frameSeconds > 0.0 && settings.frameSeconds <= 0.1)
        || !(settings.tailSeconds > 0.0) || !(settings.overSubtraction >= 1.0) || !(settings.leakRiseDbPerSecond > 0.0)
        || !(settings.maxAttenuationDb >= 0.0))
        throw std::invalid_argument("residual echo suppressor: bad settings");
    settings_ = settings;
    const double wanted = settings.frameSeconds * sampleRate;
    frame_ = 16;
    while (frame_ < wanted && frame_ < (1 << 14))
        frame_ *= 2;
    hop_ = frame_ / 2;
    bins_ = frame_ / 2 + 1;
    fft_ = std::make_unique<dsp::FftPlan<float>>(static_cast<std::size_t>(frame_));
    window_.resize(static_cast<std::size_t>(frame_));
    for (int n = 0; n < frame_; ++n)
        window_[static_cast<std::size_t>(n)] = static_cast<float>(
            std::sqrt(0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * n / frame_)));
    micIn_.assign(static_cast<std::size_t>(frame_), 0.0f);
    errIn_.assign(static_cast<std::size_t>(frame_), 0.0f);
    overlap_.assign(static_cast<std::size_t>(frame_), 0.0f);
    ready_.assign(static_cast<std::size_t>(hop_), 0.0f);
    spectrumE_.assign(static_cast<std::size_t>(frame_), {});
    spectrumD_.assign(static_cast<std::size_t>(frame_), {});
    powerE_.assign(static_cast<std::size_t>(bins_), 0.0f);
    smoothedE_.assign(static_cast<std::size_t>(bins_), 0.0f);
    echoTail_.assign(static_cast<std::size_t>(bins_), 0.0f);
    gain_.assign(static_cast<std::size_t>(bins_), 1.0f);
    const double hopSeconds = static_cast<double>(hop_) / sampleRate;
    noise_.prepare(bins_, 1.0 / hopSeconds);
    // Energy falls by 60 dB over tailSeconds.
    rho_ = static_cast<float>(std::pow(10.0, -6.0 * hopSeconds / settings.tailSeconds));
    leakRisePerFrame_ = static_cast<float>(settings.leakRiseDbPerSecond * hopSeconds);
    averaging_ = std::min(1.0, hopSeconds / settings.leakAveragingSeconds);
    setMaxAttenuationDb(settings.maxAttenuationDb);
    comfortNoiseOn_ = settings.comfortNoise;
    reset();
}

void ResidualEchoSuppressor::reset()
{
    for (auto* v : {&micIn_, &errIn_, &overlap_, &ready_, &powerE_, &smoothedE_, &echoTail_})
        std::fill(v->begin(), v->end(), 0.0f);
    std::fill(gain_.begin(), gain_.end(), 1.0f);
    noise_.reset();
    filled_ = 0;
    // A filter that has not converged leaves all of the echo: start by assuming so.
    leakDb_ = 0.0;
    excessAverage_ = tailAverage_ = 0.0;
    meanGain_ = 1.0f;
}

void ResidualEchoSuppressor::setMaxAttenuationDb(double db)
{
    floorGain_ = static_cast<float>(std::pow(10.0, -std::clamp(db, 0.0, 80.0) / 20.0));
}

void ResidualEchoSuppressor::process(std::span<const float> mic, std::span<const float> error, std::span<float> out)
{
    if (mic.size() != error.size() || out.size() < mic.size())
        throw std::invalid_argument("ResidualEchoSuppressor::process: lengths differ");
    const std::size_t tail = static_cast<std::size_t>(frame_ - hop_);
    for (std::size_t n = 0; n < mic.size(); ++n) {
        // Both inputs are read before out[n] is written: out may alias either.
        micIn_[tail + static_cast<std::size_t>(filled_)] = mic[n];
        errIn_[tail + static_cast<std::size_t>(filled_)] = error[n];
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
    }
    fft_->transform(spectrumE_, false);
    fft_->transform(spectrumD_, false);

    for (std::size_t k = 0; k < K; ++k) {
        powerE_[k] = std::norm(spectrumE_[k]);
        const float echoPower = std::norm(spectrumD_[k] - spectrumE_[k]);
        const float t = echoPower + rho_ * echoTail_[k];
        echoTail_[k] = t > 1e-30f ? t : 0.0f;   // no denormals after long silence
    }
    noise_.track(powerE_);

    // The leak is measured on frames where the echo estimate stands well above the noise floor:
    // elsewhere the ratio is noise over nothing. The floor is subtracted from the frame's total, not per
    // bin, so the noise's fluctuations average out instead of adding up as positive excess.
    const std::span<const float> floor = noise_.floor();
    double sumE = 0.0, sumTail = 0.0, sumFloor = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
        sumE += powerE_[k];
        sumTail += echoTail_[k];
        sumFloor += floor[k];
    }
    if (sumTail > 10.0 * sumFloor && sumTail > 1e-20) {
        // Per frame the ratio swings by tens of dB (speech onsets and gaps against the reverberant
        // estimate): powers averaged over about 50 ms give a usable ratio that still follows a
        // converging filter down.
        excessAverage_ += averaging_ * (std::max(0.0, sumE - sumFloor) - excessAverage_);
        tailAverage_ += averaging_ * (sumTail - tailAverage_);
        const double ratio = excessAverage_ / tailAverage_;
        const double ratioDb = ratio > 1e-6 ? std::min(10.0, 10.0 * std::log10(ratio)) : -60.0;
        if (ratioDb < leakDb_)
            leakDb_ = ratioDb;
        else
            leakDb_ += std::min<double>(leakRisePerFrame_, ratioDb - leakDb_);
    }
    const float leak = static_cast<float>(std::pow(10.0, leakDb_ / 10.0));
    const float over = static_cast<float>(settings_.overSubtraction);
    const float masking = static_cast<float>(settings_.masking);

    float gainSum = 0.0f;
    for (std::size_t k = 0; k < K; ++k) {
        smoothedE_[k] = 0.5f * smoothedE_[k] + 0.5f * powerE_[k];
        const float residual = leak * echoTail_[k];
        // Residual more than `masking` (7 dB) below the output is masked by what else is there (near end, noise):
        // only the part above that is taken away, so a converged filter's output passes untouched.
        float g = smoothedE_[k] > 0.0f ? 1.0f - over * std::max(0.0f, residual / smoothedE_[k] - masking) : 1.0f;
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
    for (std::size_t k = 1; k + 1 < K; ++k)
        spectrumE_[N - k] = std::conj(spectrumE_[k]);
    fft_->transform(spectrumE_, true);

    for (std::size_t n = 0; n < N; ++n)
        overlap_[n] += spectrumE_[n].real() * window_[n];
    std::copy_n(overlap_.begin(), H, ready_.begin());
    std::copy(overlap_.begin() + static_cast<std::ptrdiff_t>(H), overlap_.end(), overlap_.begin());
    std::fill(overlap_.end() - static_cast<std::ptrdiff_t>(H), overlap_.end(), 0.0f);
    std::copy(micIn_.begin() + static_cast<std::ptrdiff_t>(H), micIn_.end(), micIn_.begin());
    std::copy(errIn_.begin() + static_cast<std::ptrdiff_t>(H), errIn_.end(), errIn_.begin());
}

} // namespace quell::aec
