// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/BandFollowing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {
namespace {

// Powers below this count as this: digital silence has a log power too (-120 dB re full scale).
constexpr double kPowerFloor = 1e-12;
// A band's variance (in nepers squared) below this has not varied.
constexpr double kMinVariance = 1e-9;

} // namespace

void BandFollowing::prepare(std::size_t bands, double framesPerSecond, double seconds)
{
    if (bands == 0 || !(framesPerSecond > 0.0) || !(seconds > 0.0) || !std::isfinite(seconds))
        throw std::invalid_argument("BandFollowing: bands, frame rate and time constant must be positive");
    bands_.assign(bands, Band{});
    correlation_.assign(bands, 0.0);
    weight_ = std::min(1.0, 1.0 / (seconds * framesPerSecond));
    reset();
}

void BandFollowing::reset()
{
    std::fill(bands_.begin(), bands_.end(), Band{});
    std::fill(correlation_.begin(), correlation_.end(), 0.0);
    meanCorrelation_ = 0.0;
}

void BandFollowing::update(std::span<const double> signal, std::span<const double> reference)
{
    if (signal.size() != bands_.size() || reference.size() != bands_.size())
        throw std::invalid_argument("BandFollowing::update: one power per band");
    double sum = 0.0;
    for (std::size_t b = 0; b < bands_.size(); ++b) {
        Band& s = bands_[b];
        const double x = std::log(std::max(signal[b], kPowerFloor)), y = std::log(std::max(reference[b], kPowerFloor));
        // Each frame counts by the signal's power: the frames where the signal is loud say what it is now.
        const double w = std::max(signal[b], kPowerFloor);
        s.weight += weight_ * (w - s.weight);
        s.sumX += weight_ * (w * x - s.sumX);
        s.sumY += weight_ * (w * y - s.sumY);
        s.sumXX += weight_ * (w * x * x - s.sumXX);
        s.sumYY += weight_ * (w * y * y - s.sumYY);
        s.sumXY += weight_ * (w * x * y - s.sumXY);
        const double mx = s.sumX / s.weight, my = s.sumY / s.weight;
        const double vx = s.sumXX / s.weight - mx * mx, vy = s.sumYY / s.weight - my * my, cxy = s.sumXY / s.weight - mx * my;
        correlation_[b] = vx > kMinVariance && vy > kMinVariance ? std::clamp(cxy / std::sqrt(vx * vy), -1.0, 1.0) : 0.0;
        sum += correlation_[b];
    }
    meanCorrelation_ = sum / static_cast<double>(bands_.size());
}

} // namespace quell::aec
