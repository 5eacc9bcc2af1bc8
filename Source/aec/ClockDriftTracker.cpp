// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/ClockDriftTracker.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {

void ClockDriftTracker::prepare(const DriftSettings& settings, const dsp::ProcessSpec& spec)
{
    const int sampleRate = spec.sampleRate;
    if (sampleRate <= 0 || !(settings.measureSeconds > 0.0) || !(settings.minSpanSeconds > settings.measureSeconds)
        || settings.maxPoints < 4 || !(settings.gain > 0.0 && settings.gain <= 1.0) || !(settings.maxPpm > 0.0))
        throw std::invalid_argument("ClockDriftTracker: bad settings");
    settings_ = settings;
    interval_ = std::max(1, static_cast<int>(std::lround(settings.measureSeconds * sampleRate)));
    minPoints_ = std::min(settings.maxPoints, static_cast<int>(std::ceil(settings.minSpanSeconds / settings.measureSeconds)) + 1);
    peaks_.assign(static_cast<std::size_t>(settings.maxPoints), 0.0);
    reset();
}

void ClockDriftTracker::reset()
{
    count_ = 0;
    rate_ = 0.0;
    updates_ = 0;
}

void ClockDriftTracker::measure(std::span<const float> w, bool converged)
{
    if (!settings_.enabled || w.size() < 3)
        return;
    if (!converged) {
        count_ = 0;   // a gap: the line must be measured on a filter that tracks the path
        return;
    }
    std::size_t m = 0;
    for (std::size_t k = 1; k < w.size(); ++k)
        if (std::fabs(w[k]) > std::fabs(w[m]))
            m = k;
    double peak = static_cast<double>(m);
    if (m > 0 && m + 1 < w.size()) {
        const double a = std::fabs(w[m - 1]), b = std::fabs(w[m]), c = std::fabs(w[m + 1]);
        const double curvature = a - 2.0 * b + c;
        if (curvature < 0.0)
            peak += std::clamp(0.5 * (a - c) / curvature, -0.5, 0.5);
    }
    if (count_ == settings_.maxPoints) {
        std::copy(peaks_.begin() + 1, peaks_.end(), peaks_.begin());
        --count_;
    }
    peaks_[static_cast<std::size_t>(count_++)] = peak;
    if (count_ < minPoints_)
        return;

    // Least-squares line through (k, peak_k).
    const double n = count_;
    double st = 0.0, sp = 0.0, stt = 0.0, stp = 0.0;
    for (int k = 0; k < count_; ++k) {
        st += k;
        sp += peaks_[static_cast<std::size_t>(k)];
        stt += double(k) * k;
        stp += k * peaks_[static_cast<std::size_t>(k)];
    }
    const double slope = (n * stp - st * sp) / (n * stt - st * st);   // taps per measurement
    const double intercept = (sp - slope * st) / n;
    double residual = 0.0;
    for (int k = 0; k < count_; ++k) {
        const double d = peaks_[static_cast<std::size_t>(k)] - (intercept + slope * k);
        residual += d * d;
    }
    if (std::sqrt(residual / n) > settings_.maxResidualTaps) {
        count_ = 0;   // not a line: the path changed or the filter moved
        return;
    }
    // The peak moving to later taps means the echo comes later and later: the far end must be delayed
    // more every sample.
    const double limit = settings_.maxPpm * 1e-6;
    rate_ = std::clamp(rate_ + settings_.gain * slope / interval_, -limit, limit);
    ++updates_;
    count_ = 0;
}

} // namespace quell::aec
