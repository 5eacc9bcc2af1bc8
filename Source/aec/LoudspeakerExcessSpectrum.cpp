// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/LoudspeakerExcessSpectrum.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {

void LoudspeakerExcessSpectrum::prepare(std::size_t frame, std::span<const std::size_t> bandOf, std::size_t bands,
                                        float decay, double framesPerSecond)
{
    if (frame < 2 || bandOf.size() != frame / 2 + 1 || bands == 0 || !(framesPerSecond > 0.0)
        || std::any_of(bandOf.begin(), bandOf.end(), [&](std::size_t b) { return b >= bands; }))
        throw std::invalid_argument("LoudspeakerExcessSpectrum: bad frame or bands");
    fft_ = std::make_unique<dsp::FftPlan<float>>(frame);
    spectrum_.assign(frame, {});
    bandOf_.assign(bandOf.begin(), bandOf.end());
    for (std::size_t j = 0; j < kClippers; ++j) {
        tail_[j].assign(bandOf.size(), 0.0f);
        held_[j].assign(bands, 0.0);
        present_[j].assign(bands, 0.0);
    }
    decay_ = decay;
    levelSmoothing_ = std::min(1.0, 1.0 / (2.0 * framesPerSecond));
    reset();
}

void LoudspeakerExcessSpectrum::reset()
{
    for (std::size_t j = 0; j < kClippers; ++j) {
        std::fill(tail_[j].begin(), tail_[j].end(), 0.0f);
        std::fill(held_[j].begin(), held_[j].end(), 0.0);
        std::fill(present_[j].begin(), present_[j].end(), 0.0);
    }
    farPower_ = 0.0;
}

void LoudspeakerExcessSpectrum::update(std::span<const float> far, std::span<const float> window, std::size_t hop)
{
    const std::size_t N = spectrum_.size();
    if (far.size() != N || window.size() != N || hop == 0 || hop > N)
        throw std::invalid_argument("LoudspeakerExcessSpectrum::update: wrong frame");
    double power = 0.0;
    for (std::size_t n = N - hop; n < N; ++n)
        power += static_cast<double>(far[n]) * far[n];
    power /= static_cast<double>(hop);
    if (farPower_ == 0.0)
        farPower_ = power;
    else if (power > 0.1 * farPower_)
        farPower_ += levelSmoothing_ * (power - farPower_);
    const float rms = static_cast<float>(std::sqrt(farPower_));
    for (std::size_t j = 0; j < kClippers; ++j) {
        const float knee = kKnees[j] * rms;
        for (std::size_t n = 0; n < N; ++n)
            spectrum_[n] = {(std::clamp(far[n], -knee, knee) - far[n]) * window[n], 0.0f};
        fft_->transform(spectrum_, false);
        std::fill(held_[j].begin(), held_[j].end(), 0.0);
        std::fill(present_[j].begin(), present_[j].end(), 0.0);
        for (std::size_t k = 0; k < bandOf_.size(); ++k) {
            const float now = std::norm(spectrum_[k]);
            const float kept = std::max(now, decay_ * tail_[j][k]);
            tail_[j][k] = kept > 1e-30f ? kept : 0.0f;   // no denormals after long silence
            held_[j][bandOf_[k]] += tail_[j][k];
            present_[j][bandOf_[k]] += now;
        }
    }
}

} // namespace quell::aec
