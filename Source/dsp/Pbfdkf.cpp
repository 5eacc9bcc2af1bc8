// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/Pbfdkf.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dsp/RlsRowKernels.h"

namespace quell::dsp {

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
    // The regressor and taps cover whole partitions (the taps past `taps` stay zero), padded to 16.
    const std::size_t covered = static_cast<std::size_t>(partitions_) * static_cast<std::size_t>(block_);
    stride_ = (covered + 15) / 16 * 16;
    bins_ = 2 * static_cast<std::size_t>(block_);
    fft_ = FftPlan<float>(bins_);
    u_.resize(channels_ * stride_);
    w_.resize(channels_ * stride_);
    weights_.assign(channels_ * taps_, 0.0f);
    window_.assign(channels_ * bins_, 0.0f);
    error_.assign(static_cast<std::size_t>(block_), 0.0f);
    micBlock_.assign(static_cast<std::size_t>(block_), 0.0f);
    spectra_.assign(channels_ * static_cast<std::size_t>(partitions_) * bins_, {});
    uncertainty_.assign(channels_ * static_cast<std::size_t>(partitions_) * bins_, 0.0f);
    scratch_.assign(bins_, {});
    errorSpectrum_.assign(bins_, {});
    denominator_.assign(bins_, 0.0f);
    // The prior's shape depends on the settings alone: computed here, not on every restart.
    priorProfile_ = uncertaintyProfile(settings_, block_, partitions_);
    priorSum_ = 0.0;
    for (const double v : priorProfile_)
        priorSum_ += v;
    reset();
}

void Pbfdkf::reset()
{
    u_.zero();
    w_.zero();
    std::fill(weights_.begin(), weights_.end(), 0.0f);
    std::fill(window_.begin(), window_.end(), 0.0f);
    std::fill(error_.begin(), error_.end(), 0.0f);
    std::fill(spectra_.begin(), spectra_.end(), std::complex<float>{});
    filled_ = 0;
    pausedInBlock_ = 0;
    newest_ = 0;
    health_ = {};
    restartUncertainty();
}

void Pbfdkf::restartUncertainty()
{
    adaptedBlocks_ = 0;
    std::fill(uncertainty_.begin(), uncertainty_.end(), 0.0f);
    uncertaintyPending_ = true;
}

double Pbfdkf::processNoiseFactor() const
{
    const double first = 1.0 - settings_.transition * settings_.transition;
    const double last = 1.0 - settings_.finalTransition * settings_.finalTransition;
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
    float y = 0.0f;
    const std::size_t covered = static_cast<std::size_t>(partitions_) * static_cast<std::size_t>(block_);
    for (std::size_t c = 0; c < channels_; ++c) {
        float xc = x[c];
        if (!std::isfinite(xc)) {
            xc = 0.0f;
            ++health_.sanitisedSamples;
        }
        float* u = u_.data() + c * stride_;
        std::copy_backward(u, u + covered - 1, u + covered);
        u[0] = xc;
        window_[c * bins_ + static_cast<std::size_t>(block_ + filled_)] = xc;
        y += detail::dot(w_.data() + c * stride_, u, stride_);
    }
    float e = d - y;
    if (!std::isfinite(e)) {
        // Divergence (it takes inputs near float's range): start again rather than play garbage.
        w_.zero();
        std::fill(weights_.begin(), weights_.end(), 0.0f);
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
    const std::size_t B = static_cast<std::size_t>(block_), P = static_cast<std::size_t>(partitions_), M = bins_;
    // The newest far-end window of each channel becomes X_0; the ring drops the oldest.
    newest_ = (newest_ + partitions_ - 1) % partitions_;
    for (std::size_t c = 0; c < channels_; ++c) {
        float* win = &window_[c * M];
        for (std::size_t i = 0; i < M; ++i)
            scratch_[i] = {win[i], 0.0f};
        fft_.transform(scratch_, false);
        std::copy(scratch_.begin(), scratch_.end(), spectra_.begin() + static_cast<std::ptrdiff_t>((c * P + static_cast<std::size_t>(newest_)) * M));
        std::copy(win + B, win + M, win);
    }
    // Adapt only from blocks the canceller let it learn from (most of the block's samples).
    if (!adapting_ || 2 * static_cast<std::size_t>(pausedInBlock_) > B)
        return;
    if (uncertaintyPending_) {
        // Phi(0) from the first block the far end is clearly active in (above -60 dBFS): the echo path
        // cannot hold more energy than the microphone over the far end, so the filter starts as
        // uncertain as the signals allow, whatever the levels (a fixed Phi(0) either overshoots or
        // crawls, by 20 dB of ERLE, as the echo path's gain moves it).
        double xe = 0.0, de = 0.0;
        for (std::size_t c = 0; c < channels_; ++c)
            for (std::size_t i = 0; i < B; ++i)
                xe += double(window_[c * M + i]) * window_[c * M + i];   // (shifted: the block just in)
        for (std::size_t i = 0; i < B; ++i)
            de += double(micBlock_[i]) * micBlock_[i];
        if (xe > 1e-6 * double(B)) {
            const double pathEnergy = de / xe;   // the echo path's energy if the microphone were all echo
            const double first = settings_.uncertaintyScale * pathEnergy / priorSum_;
            uncertaintyCap_ = static_cast<float>(first);
            for (std::size_t c = 0; c < channels_; ++c)
                for (std::size_t p = 0; p < P; ++p)
                    std::fill_n(uncertainty_.begin() + static_cast<std::ptrdiff_t>((c * P + p) * M), M,
                                static_cast<float>(first * priorProfile_[p]));
            uncertaintyPending_ = false;
        } else {
            return;
        }
    }

    for (std::size_t i = 0; i < B; ++i)
        errorSpectrum_[i] = {0.0f, 0.0f};
    for (std::size_t i = 0; i < B; ++i)
        errorSpectrum_[B + i] = {error_[i], 0.0f};
    fft_.transform(errorSpectrum_, false);

    // R/M = 1/2: the error block is half of the transform window.
    constexpr float kHalf = 0.5f;
    // The observation noise is taken as the whole a-priori error: what the filter cannot yet explain
    // slows it down (a-posteriori estimates of the noise alone overshot on speech, whose partitions are
    // far from the independence the diagonal form assumes), and near-end speech stops it at once. The
    // predicted residual is weighted by residualWeight (PbfdkfSettings says why it is not R/M).
    const float residualWeight = static_cast<float>(settings_.residualWeight);
    for (std::size_t f = 0; f < M; ++f)
        denominator_[f] = std::norm(errorSpectrum_[f]) + 1e-30f;
    for (std::size_t c = 0; c < channels_; ++c)
        for (std::size_t p = 0; p < P; ++p) {
            const std::complex<float>* X = &spectra_[(c * P + (static_cast<std::size_t>(newest_) + p) % P) * M];
            const float* phi = &uncertainty_[(c * P + p) * M];
            for (std::size_t f = 0; f < M; ++f)
                denominator_[f] += residualWeight * phi[f] * std::norm(X[f]);
        }

    const float a2 = static_cast<float>(1.0 - processNoiseFactor());
    ++adaptedBlocks_;
    for (std::size_t c = 0; c < channels_; ++c) {
        float* w = w_.data() + c * stride_;
        for (std::size_t p = 0; p < P; ++p) {
            const std::complex<float>* X = &spectra_[(c * P + (static_cast<std::size_t>(newest_) + p) % P) * M];
            float* phi = &uncertainty_[(c * P + p) * M];
            // The gradient step, constrained to the partition's B taps.
            for (std::size_t f = 0; f < M; ++f)
                scratch_[f] = (phi[f] / denominator_[f]) * std::conj(X[f]) * errorSpectrum_[f];
            fft_.transform(scratch_, true);
            float* wp = w + p * B;
            const std::size_t valid = std::min(B, taps_ > p * B ? taps_ - p * B : 0);
            for (std::size_t i = 0; i < valid; ++i)
                wp[i] += scratch_[i].real();
            // |W_p|^2 of the updated taps, for the process noise.
            for (std::size_t i = 0; i < B; ++i)
                scratch_[i] = {wp[i], 0.0f};
            for (std::size_t i = B; i < M; ++i)
                scratch_[i] = {0.0f, 0.0f};
            fft_.transform(scratch_, false);
            for (std::size_t f = 0; f < M; ++f) {
                const float gain = kHalf * phi[f] * std::norm(X[f]) / denominator_[f];
                phi[f] = std::min(a2 * (1.0f - gain) * phi[f] + (1.0f - a2) * std::norm(scratch_[f]), uncertaintyCap_);
            }
        }
        std::copy(w, w + taps_, weights_.begin() + static_cast<std::ptrdiff_t>(c * taps_));
    }
}

} // namespace quell::dsp
