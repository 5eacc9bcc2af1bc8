// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/Pbfdkf.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace quell::dsp {

namespace {

// a x b in real arithmetic: std::complex's operator* checks each product for NaN and infinity and calls a
// library routine to redo it (in this filter's per-bin loops that cost several times the loop itself).
inline std::complex<float> product(float ar, float ai, float br, float bi)
{
    return {ar * br - ai * bi, ar * bi + ai * br};
}

} // namespace

int automaticBlockSize(int taps)
{
    int block = 64;
    while (block < 256 && block * 32 < taps)
        block *= 2;
    while (block > 16 && block > taps)   // a short filter: no block longer than the filter
        block /= 2;
    return block;
}

std::vector<double> uncertaintyProfile(const PbfdkfSettings& settings, int block, int partitions)
{
    const double perPartition = std::pow(10.0, -settings.uncertaintyDecayDbPerTap * double(block) / 10.0);
    std::vector<double> profile(static_cast<std::size_t>(partitions));
    for (std::size_t p = 0; p < profile.size(); ++p)
        profile[p] = std::pow(perPartition, double(p));
    return profile;
}

void validate(const PbfdkfSettings& s)
{
    if (s.taps < 1 || s.taps > 65536)
        throw std::invalid_argument("Kalman filter taps must be between 1 and 65536 per channel (got " + std::to_string(s.taps) + ")");
    if (s.channels < 1 || s.channels > 8)
        throw std::invalid_argument("Kalman filter far-end channels must be between 1 and 8 (got " + std::to_string(s.channels) + ")");
    if (s.blockSize != 0 && (s.blockSize < 16 || s.blockSize > 4096 || (s.blockSize & (s.blockSize - 1)) != 0))
        throw std::invalid_argument("Kalman filter block size must be 0 (automatic) or a power of two from 16 to 4096 (got "
                                    + std::to_string(s.blockSize) + ")");
    if (!(s.transition > 0.0 && s.transition < 1.0))
        throw std::invalid_argument("Kalman filter transition factor must lie in (0, 1)");
    if (!(s.transitionGrowthBlocks >= 0.0 && std::isfinite(s.transitionGrowthBlocks)))
        throw std::invalid_argument("Kalman filter transition growth must be a non-negative number of blocks");
    if (!(s.finalTransition >= s.transition && s.finalTransition < 1.0))
        throw std::invalid_argument("Kalman filter final transition factor must lie in [transition, 1)");
    if (!(s.uncertaintyScale > 0.0 && std::isfinite(s.uncertaintyScale)))
        throw std::invalid_argument("Kalman filter uncertainty scale must be positive");
    if (!(s.uncertaintyDecayDbPerTap >= 0.0 && s.uncertaintyDecayDbPerTap <= 1.0))
        throw std::invalid_argument("Kalman filter uncertainty decay must be between 0 and 1 dB per tap");
    if (!(s.residualWeight >= 0.0 && s.residualWeight <= 100.0))
        throw std::invalid_argument("Kalman filter residual weight must be between 0 and 100");
}

void Pbfdkf::prepare(const PbfdkfSettings& settings)
{
    validate(settings);
    settings_ = settings;
    block_ = settings_.blockSize != 0 ? settings_.blockSize : automaticBlockSize(settings.taps);
    partitions_ = (settings.taps + block_ - 1) / block_;
    taps_ = static_cast<std::size_t>(settings.taps);
    channels_ = static_cast<std::size_t>(settings.channels);
    // The taps cover whole partitions (the taps past `taps` stay zero), padded to 16.
    const std::size_t covered = static_cast<std::size_t>(partitions_) * static_cast<std::size_t>(block_);
    stride_ = (covered + 15) / 16 * 16;
    fft_ = RealFftPlan<float>(2 * static_cast<std::size_t>(block_));
    bins_ = fft_.bins();
    w_.resize(channels_ * stride_);
    weightSpectra_.assign(channels_ * static_cast<std::size_t>(partitions_) * bins_, {});
    pastEcho_.assign(static_cast<std::size_t>(block_), 0.0f);
    blockFarEnd_.assign(channels_ * static_cast<std::size_t>(block_), 0.0f);
    weights_.assign(channels_ * taps_, 0.0f);
    window_.assign(channels_ * fft_.size(), 0.0f);
    error_.assign(static_cast<std::size_t>(block_), 0.0f);
    micBlock_.assign(static_cast<std::size_t>(block_), 0.0f);
    spectra_.assign(channels_ * static_cast<std::size_t>(partitions_) * bins_, {});
    uncertainty_.assign(channels_ * static_cast<std::size_t>(partitions_) * bins_, 0.0f);
    scratch_.assign(bins_, {});
    errorSpectrum_.assign(bins_, {});
    lastBlockSpectrum_.assign(bins_, {});
    denominator_.assign(bins_, 0.0f);
    timeScratch_.assign(fft_.size(), 0.0f);
    // The prior's shape depends on the settings alone: computed here, not on every restart.
    priorProfile_ = uncertaintyProfile(settings_, block_, partitions_);
    priorSum_ = 0.0;
    for (const double v : priorProfile_)
        priorSum_ += v;
    reset();
}

void Pbfdkf::reset()
{
    zeroWeights();
    std::fill(window_.begin(), window_.end(), 0.0f);
    std::fill(error_.begin(), error_.end(), 0.0f);
    std::fill(spectra_.begin(), spectra_.end(), std::complex<float>{});
    filled_ = 0;
    pausedInBlock_ = 0;
    newest_ = 0;
    health_ = {};
    restartUncertainty();
}

void Pbfdkf::zeroWeights()
{
    w_.zero();
    std::fill(weightSpectra_.begin(), weightSpectra_.end(), std::complex<float>{});
    std::fill(pastEcho_.begin(), pastEcho_.end(), 0.0f);
    std::fill(weights_.begin(), weights_.end(), 0.0f);
    weightsZero_ = true;
}

void Pbfdkf::transformHalfWindow(const float* samples, bool secondHalf, std::span<std::complex<float>> spectrum)
{
    const auto B = static_cast<std::ptrdiff_t>(block_);
    std::copy_n(samples, B, timeScratch_.begin() + (secondHalf ? B : 0));
    std::fill_n(timeScratch_.begin() + (secondHalf ? 0 : B), B, 0.0f);
    fft_.forward(timeScratch_, spectrum);
}

void Pbfdkf::restartUncertainty()
{
    adaptedBlocks_ = 0;
    std::fill(uncertainty_.begin(), uncertainty_.end(), 0.0f);
    uncertaintyPending_ = true;
    priorFarEnergy_ = priorMicEnergy_ = 0.0;
    priorSamples_ = 0;
}

double Pbfdkf::processNoiseFactor() const
{
    const double first = processNoisePerBlock(settings_.transition, block_);
    const double last = processNoisePerBlock(settings_.finalTransition, block_);
    if (settings_.transitionGrowthBlocks <= 0.0)
        return first;
    return std::max(last, first / (1.0 + double(adaptedBlocks_) / settings_.transitionGrowthBlocks));
}

void Pbfdkf::process(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
{
    if (channels_ != 1)
        throw std::invalid_argument("Pbfdkf::process: one far-end channel; use processInterleaved for " + std::to_string(channels_));
    if (mic.size() != ref.size() || out.size() < mic.size())
        throw std::invalid_argument("Pbfdkf::process: mic, ref and out must have the same length");
    for (std::size_t n = 0; n < mic.size(); ++n)
        out[n] = processSample(mic[n], &ref[n]);
}

void Pbfdkf::processInterleaved(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
{
    if (ref.size() != mic.size() * channels_ || out.size() < mic.size())
        throw std::invalid_argument("Pbfdkf::processInterleaved: ref must hold channels x mic samples, out at least mic's");
    for (std::size_t n = 0; n < mic.size(); ++n)
        out[n] = processSample(mic[n], &ref[n * channels_]);
}

float Pbfdkf::processSample(float d, const float* x)
{
    if (!std::isfinite(d)) {
        d = 0.0f;
        ++health_.sanitisedSamples;
    }
    const std::size_t B = static_cast<std::size_t>(block_), i = static_cast<std::size_t>(filled_);
    // The earlier blocks' echo, then taps 0..i on this block's samples (newest first from B - 1 - i).
    float y = pastEcho_[i];
    for (std::size_t c = 0; c < channels_; ++c) {
        float xc = x[c];
        if (!std::isfinite(xc)) {
            xc = 0.0f;
            ++health_.sanitisedSamples;
        }
        window_[c * fft_.size() + B + i] = xc;
        float* reversed = &blockFarEnd_[c * B];
        reversed[B - 1 - i] = xc;
        const float* w = w_.data() + c * stride_;
        const float* u = reversed + (B - 1 - i);
        float acc = 0.0f;
        for (std::size_t k = 0; k <= i; ++k)
            acc += w[k] * u[k];
        y += acc;
    }
    float e = d - y;
    if (!std::isfinite(e)) {
        // Divergence (it takes inputs near float's range): start again rather than play garbage.
        zeroWeights();
        restartUncertainty();
        ++health_.reinitialisations;
        e = d;
    }
    error_[static_cast<std::size_t>(filled_)] = e;
    micBlock_[static_cast<std::size_t>(filled_)] = d;
    if (!adapting_) {
        ++health_.pausedSamples;
        ++pausedInBlock_;
    }
    if (++filled_ == block_) {
        updateBlock();
        filled_ = 0;
        pausedInBlock_ = 0;
    }
    return e;
}

void Pbfdkf::updateBlock()
{
    const std::size_t B = static_cast<std::size_t>(block_), P = static_cast<std::size_t>(partitions_), M = fft_.size(),
                      K = bins_;
    // The newest far-end window of each channel becomes X_0; the ring drops the oldest.
    newest_ = (newest_ + partitions_ - 1) % partitions_;
    for (std::size_t c = 0; c < channels_; ++c) {
        float* win = &window_[c * M];
        fft_.forward({win, M}, {&spectra_[(c * P + static_cast<std::size_t>(newest_)) * K], K});
        std::copy(win + B, win + M, win);
    }
    // Adapt only from blocks the canceller let it learn from (most of the block's samples).
    if (adapting_ && 2 * static_cast<std::size_t>(pausedInBlock_) <= B)
        adaptBlock();
    if (!weightsZero_)   // (zero weights predict zeros, which pastEcho_ already holds)
        predictPastEcho();
}

void Pbfdkf::predictPastEcho()
{
    const std::size_t B = static_cast<std::size_t>(block_), P = static_cast<std::size_t>(partitions_), M = fft_.size(),
                      K = bins_;
    // Overlap-save: the last B samples of W_p's product with a window of the far end p blocks back are
    // partition p's echo in the block about to start. For p >= 1 the window holds only earlier blocks and
    // is in the ring already (X_{p-1}); for p = 0 it is the block just ended followed by zeros, which
    // leaves the new block's samples to the sample-by-sample taps.
    std::fill(scratch_.begin(), scratch_.end(), std::complex<float>{});
    for (std::size_t c = 0; c < channels_; ++c) {
        transformHalfWindow(&window_[c * M], false, lastBlockSpectrum_);
        for (std::size_t p = 0; p < P; ++p) {
            const std::complex<float>* W = &weightSpectra_[(c * P + p) * K];
            const std::complex<float>* X = p == 0 ? lastBlockSpectrum_.data() : &spectra_[(c * P + (static_cast<std::size_t>(newest_) + p - 1) % P) * K];
            for (std::size_t f = 0; f < K; ++f)
                scratch_[f] += product(W[f].real(), W[f].imag(), X[f].real(), X[f].imag());
        }
    }
    fft_.inverse(scratch_, timeScratch_);
    std::copy_n(timeScratch_.begin() + static_cast<std::ptrdiff_t>(B), B, pastEcho_.begin());
}

void Pbfdkf::adaptBlock()
{
    const std::size_t B = static_cast<std::size_t>(block_), P = static_cast<std::size_t>(partitions_), M = fft_.size(),
                      K = bins_;
    if (uncertaintyPending_) {
        // Phi(0) from the far end's first stretch of blocks clearly active (above -60 dBFS), at least
        // kPriorMeasureSamples long (PbfdkfSettings.h says why): the echo path
        // cannot hold more energy than the microphone over the far end, so the filter starts as
        // uncertain as the signals allow, whatever the levels (a fixed Phi(0) either overshoots or
        // crawls, by 20 dB of ERLE, as the echo path's gain moves it).
        double xe = 0.0, de = 0.0;
        for (std::size_t c = 0; c < channels_; ++c)
            for (std::size_t i = 0; i < B; ++i)
                xe += double(window_[c * M + i]) * window_[c * M + i];   // (shifted: the block just in)
        for (std::size_t i = 0; i < B; ++i)
            de += double(micBlock_[i]) * micBlock_[i];
        if (!(xe > 1e-6 * double(B))) {   // an inactive block ends a stretch
            priorFarEnergy_ = priorMicEnergy_ = 0.0;
            priorSamples_ = 0;
            return;
        }
        priorFarEnergy_ += xe;
        priorMicEnergy_ += de;
        priorSamples_ += block_;
        if (priorSamples_ >= kPriorMeasureSamples) {
            const double pathEnergy = priorMicEnergy_ / priorFarEnergy_;   // the echo path's energy if the microphone were all echo
            const double first = settings_.uncertaintyScale * pathEnergy / priorSum_;
            uncertaintyCap_ = static_cast<float>(first);
            for (std::size_t c = 0; c < channels_; ++c)
                for (std::size_t p = 0; p < P; ++p)
                    std::fill_n(uncertainty_.begin() + static_cast<std::ptrdiff_t>((c * P + p) * K), K,
                                static_cast<float>(first * priorProfile_[p]));
            uncertaintyPending_ = false;
        } else {
            return;
        }
    }

    transformHalfWindow(error_.data(), true, errorSpectrum_);

    // R/M = 1/2: the error block is half of the transform window.
    constexpr float kHalf = 0.5f;
    // The observation noise is taken as the whole a-priori error: what the filter cannot yet explain
    // slows it down (a-posteriori estimates of the noise alone overshot on speech, whose partitions are
    // far from the independence the diagonal form assumes), and near-end speech stops it at once. The
    // predicted residual is weighted by residualWeight (PbfdkfSettings says why it is not R/M).
    const float residualWeight = static_cast<float>(settings_.residualWeight);
    for (std::size_t f = 0; f < K; ++f)
        denominator_[f] = std::norm(errorSpectrum_[f]) + 1e-30f;
    for (std::size_t c = 0; c < channels_; ++c)
        for (std::size_t p = 0; p < P; ++p) {
            const std::complex<float>* X = &spectra_[(c * P + (static_cast<std::size_t>(newest_) + p) % P) * K];
            const float* phi = &uncertainty_[(c * P + p) * K];
            for (std::size_t f = 0; f < K; ++f)
                denominator_[f] += residualWeight * phi[f] * std::norm(X[f]);
        }

    const float a2 = static_cast<float>(1.0 - processNoiseFactor());
    ++adaptedBlocks_;
    weightsZero_ = false;
    for (std::size_t c = 0; c < channels_; ++c) {
        float* w = w_.data() + c * stride_;
        for (std::size_t p = 0; p < P; ++p) {
            const std::complex<float>* X = &spectra_[(c * P + (static_cast<std::size_t>(newest_) + p) % P) * K];
            float* phi = &uncertainty_[(c * P + p) * K];
            // The gradient step, constrained to the partition's B taps.
            for (std::size_t f = 0; f < K; ++f) {
                const float g = phi[f] / denominator_[f];
                const std::complex<float> v = product(X[f].real(), -X[f].imag(), errorSpectrum_[f].real(), errorSpectrum_[f].imag());
                scratch_[f] = {g * v.real(), g * v.imag()};
            }
            fft_.inverse(scratch_, timeScratch_);
            float* wp = w + p * B;
            const std::size_t valid = std::min(B, taps_ > p * B ? taps_ - p * B : 0);
            for (std::size_t i = 0; i < valid; ++i)
                wp[i] += timeScratch_[i];
            // |W_p|^2 of the updated taps, for the process noise.
            std::complex<float>* W = &weightSpectra_[(c * P + p) * K];
            transformHalfWindow(wp, false, {W, K});
            for (std::size_t f = 0; f < K; ++f) {
                const float gain = kHalf * phi[f] * std::norm(X[f]) / denominator_[f];
                phi[f] = std::min(a2 * (1.0f - gain) * phi[f] + (1.0f - a2) * std::norm(W[f]), uncertaintyCap_);
            }
        }
        std::copy(w, w + taps_, weights_.begin() + static_cast<std::ptrdiff_t>(c * taps_));
    }
}

} // namespace quell::dsp
