// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/ComfortNoise.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace quell::aec {
namespace {

// A floor under this (-300 dB) is the remains of digital silence, not a noise floor.
constexpr float kLostFloor = 1e-30f;

} // namespace

void ComfortNoise::prepare(int bins, double framesPerSecond, const ComfortNoiseSettings& settings)
{
    if (bins <= 0 || !(framesPerSecond > 0.0) || !(settings.riseDbPerSecond > 0.0)
        || !(settings.riseDbPerSecondWithEcho >= 0.0 && settings.riseDbPerSecondWithEcho <= settings.riseDbPerSecond) || !(settings.biasCompensation >= 1.0)
        || !(settings.smoothing >= 0.0 && settings.smoothing < 1.0))
        throw std::invalid_argument("ComfortNoise: bad settings");
    settings_ = settings;
    smoothed_.assign(static_cast<std::size_t>(bins), 0.0f);
    floor_.assign(static_cast<std::size_t>(bins), 0.0f);
    estimate_.assign(static_cast<std::size_t>(bins), 0.0f);
    rise_ = static_cast<float>(std::pow(10.0, settings.riseDbPerSecond / 10.0 / framesPerSecond));
    riseWithEcho_ = static_cast<float>(std::pow(10.0, settings.riseDbPerSecondWithEcho / 10.0 / framesPerSecond));
    reset();
}

void ComfortNoise::reset()
{
    std::fill(smoothed_.begin(), smoothed_.end(), 0.0f);
    std::fill(floor_.begin(), floor_.end(), 0.0f);
    std::fill(estimate_.begin(), estimate_.end(), 0.0f);
    state_ = settings_.seed != 0 ? settings_.seed : 1u;
    first_ = true;
}

void ComfortNoise::track(std::span<const float> power, bool echoPossible)
{
    if (power.size() != floor_.size())
        throw std::invalid_argument("ComfortNoise::track: wrong number of bins");
    const float a = static_cast<float>(settings_.smoothing);
    const float bias = static_cast<float>(settings_.biasCompensation);
    const float rise = echoPossible ? riseWithEcho_ : rise_;
    for (std::size_t k = 0; k < power.size(); ++k) {
        const float p = std::isfinite(power[k]) ? power[k] : 0.0f;
        smoothed_[k] = first_ ? p : a * smoothed_[k] + (1.0f - a) * p;
        // Starts from the first frame rather than from zero, so the floor is not silent for the
        // seconds a rise from zero would take; and again after digital silence, where it fell to zero
        // (or under kLostFloor, where a rise by a factor is lost to rounding) and no rise lifts it.
        floor_[k] = first_ || smoothed_[k] < floor_[k] || floor_[k] < kLostFloor ? smoothed_[k] : floor_[k] * rise;
        estimate_[k] = bias * floor_[k];
    }
    first_ = false;
}

void ComfortNoise::fill(std::span<std::complex<float>> half, std::span<const float> gain)
{
    if (half.size() != floor_.size() || gain.size() != floor_.size())
        throw std::invalid_argument("ComfortNoise::fill: wrong number of bins");
    const std::size_t last = half.size() - 1;
    for (std::size_t k = 0; k < half.size(); ++k) {
        const float missing = 1.0f - gain[k] * gain[k];
        // Drawn for every bin, so the random sequence does not depend on the gains.
        const float phase = 2.0f * std::numbers::pi_v<float> * nextUniform();
        if (!(missing > 0.0f))
            continue;
        const float magnitude = std::sqrt(estimate_[k] * missing);
        // DC and Nyquist are real in the spectrum of a real frame.
        if (k == 0 || k == last)
            half[k] += magnitude * std::cos(phase);
        else
            half[k] += std::polar(magnitude, phase);
    }
}

float ComfortNoise::nextUniform()
{
    // xorshift32: cheap, deterministic (a live run and a file render give the same samples).
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return static_cast<float>(state_ >> 8) * (1.0f / 16777216.0f);
}

} // namespace quell::aec
