// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/AlignmentShift.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {

void AlignmentShift::prepare(const AlignmentShiftSettings& settings)
{
    if (!(settings.memorySegments >= 1.0) || !(settings.maxLostEnergyFraction >= 0.0))
        throw std::invalid_argument("AlignmentShift: bad settings");
    settings_ = settings;
    decay_ = 1.0 - 1.0 / settings.memorySegments;
    cancelling_ = std::pow(10.0, settings.cancellingDb / 10.0);
    reset();
}

void AlignmentShift::reset()
{
    mic_ = out_ = 0.0;
    refusals_ = 0;
    lastRefused_ = -1;
}

void AlignmentShift::refused(long target)
{
    if (target != lastRefused_)
        ++refusals_;
    lastRefused_ = target;
}

void AlignmentShift::segment(double micEnergy, double outEnergy, double farEnergy, int samples)
{
    if (samples <= 0 || farEnergy < settings_.activeMeanSquare * samples)
        return;
    mic_ = decay_ * mic_ + micEnergy;
    out_ = decay_ * out_ + outEnergy;
}

bool AlignmentShift::cancelling() const { return mic_ > 0.0 && mic_ >= cancelling_ * out_; }

double AlignmentShift::lostEnergyFraction(std::span<const float> weights, int channels, int shift)
{
    if (channels <= 0 || weights.empty() || shift == 0)
        return 0.0;
    const std::size_t perChannel = weights.size() / static_cast<std::size_t>(channels);
    const std::size_t lost = std::min(perChannel, static_cast<std::size_t>(std::abs(shift)));
    double total = 0.0, gone = 0.0;
    for (std::size_t c = 0; c < static_cast<std::size_t>(channels); ++c) {
        const float* w = weights.data() + c * perChannel;
        // Delayed more: the path moves towards tap 0 and its first taps fall off; delayed less: its last.
        const std::size_t from = shift > 0 ? 0 : perChannel - lost;
        for (std::size_t i = 0; i < perChannel; ++i) {
            const double e = double(w[i]) * w[i];
            total += e;
            if (i >= from && i < from + lost)
                gone += e;
        }
    }
    return total > 0.0 ? gone / total : 0.0;
}

bool AlignmentShift::allows(std::span<const float> weights, int channels, int shift) const
{
    return !cancelling() || lostEnergyFraction(weights, channels, shift) <= settings_.maxLostEnergyFraction;
}

} // namespace quell::aec
