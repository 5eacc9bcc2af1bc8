// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/ResidualGainTracker.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {

void ResidualGainTracker::prepare(std::size_t bands, double framesPerSecond, const ResidualGainSettings& settings)
{
    if (bands == 0 || !(framesPerSecond > 0.0) || !(settings.quantile > 0.0 && settings.quantile < 1.0)
        || !(settings.fallDbPerSecond > 0.0) || !(settings.slowRiseDbPerSecond >= 0.0) || !(settings.nearEndDb > 0.0)
        || !(settings.minVariation >= 0.0) || !(settings.variationSeconds > 0.0) || !(settings.envelopeSeconds >= 0.0))
        throw std::invalid_argument("ResidualGainTracker: bad settings");
    settings_ = settings;
    bands_.assign(bands, Band{});
    gain_.assign(bands, 0.0);
    used_.assign(bands, 0);
    correlation_.assign(bands, 0.0);
    auto perFrame = [&](double dbPerSecond) { return std::pow(10.0, dbPerSecond / 10.0 / framesPerSecond); };
    // Up by quantile / (1 - quantile) times the step down: at equilibrium a `quantile` of the frames lie
    // beneath.
    up_ = perFrame(settings.fallDbPerSecond * settings.quantile / (1.0 - settings.quantile));
    slowUp_ = perFrame(settings.slowRiseDbPerSecond);
    down_ = 1.0 / perFrame(settings.fallDbPerSecond);
    nearEnd_ = std::pow(10.0, settings.nearEndDb / 10.0);
    maxGain_ = std::pow(10.0, settings.maxGainDb / 10.0);
    initial_ = std::pow(10.0, settings.initialDb / 10.0);
    averaging_ = std::min(1.0, 1.0 / (settings.variationSeconds * framesPerSecond));
    envelopeSmoothing_ = std::min(1.0, 1.0 / std::max(1.0, settings.envelopeSeconds * framesPerSecond));
    longRun_ = std::max(1, static_cast<int>(std::lround(0.032 * framesPerSecond)));
    reset();
}

void ResidualGainTracker::reset()
{
    std::fill(bands_.begin(), bands_.end(), Band{});
    std::fill(gain_.begin(), gain_.end(), initial_);
    std::fill(used_.begin(), used_.end(), 0);
    std::fill(correlation_.begin(), correlation_.end(), 0.0);
    meanCorrelation_ = 0.0;
    frames_ = 0;
}

double ResidualGainTracker::trackedDb(std::size_t band) const
{
    return 10.0 * std::log10(std::max(gain_[band], 1e-12));
}

void ResidualGainTracker::update(std::span<const double> output, std::span<const double> predictor,
                                 std::span<const double> present)
{
    if (output.size() != bands_.size() || predictor.size() != bands_.size() || present.size() != bands_.size())
        throw std::invalid_argument("ResidualGainTracker::update: wrong number of bands");
    ++frames_;
    // Exponential averages, as a running mean while fewer frames than the memory have been seen.
    const double a = std::max(averaging_, 1.0 / static_cast<double>(frames_));
    for (std::size_t b = 0; b < bands_.size(); ++b) {
        Band& s = bands_[b];
        const double o = std::isfinite(output[b]) ? std::max(0.0, output[b]) : 0.0;
        const double p = std::isfinite(predictor[b]) ? predictor[b] : 0.0;
        const double now = std::isfinite(present[b]) ? present[b] : 0.0;
        if (!(p > 1e-20))
            continue;
        s.meanPresent += a * (now - s.meanPresent);
        s.meanPredictor += a * (p - s.meanPredictor);
        s.meanOut += a * (o - s.meanOut);
        const double dp = p - s.meanPredictor, dout = o - s.meanOut;
        s.variance += a * (dp * dp - s.variance);
        s.varianceOut += a * (dout * dout - s.varianceOut);
        s.covariance += a * (dp * dout - s.covariance);
        s.envelope += envelopeSmoothing_ * (p - s.envelope);
        s.meanEnvelope += a * (s.envelope - s.meanEnvelope);
        const double de = s.envelope - s.meanEnvelope;
        s.varianceEnvelope += a * (de * de - s.varianceEnvelope);
        const bool varies = s.varianceEnvelope >= settings_.minVariation * s.meanEnvelope * s.meanEnvelope;
        const double spread = std::sqrt(s.variance * s.varianceOut);
        correlation_[b] = spread > 0.0 ? s.covariance / spread : 0.0;
        const bool follows = s.covariance >= settings_.minCorrelation * spread && s.covariance > 0.0;
        used_[b] = varies && follows;
        // Learn where this band of the predictor carries power now (a quarter of its mean and more, and
        // `presentFraction` of the predictor: not in its decay): elsewhere the ratio is noise over nothing,
        // or the room's reverberation against the predictor's model of it.
        if (!(now >= 0.25 * s.meanPresent && now >= settings_.presentFraction * p && now > 1e-20))
            continue;
        const double ratio = o / p;
        double& g = gain_[b];
        if (ratio > nearEnd_ * g) {
            g *= slowUp_;
            s.fallRun = 0;
        } else if (ratio > g) {
            g *= up_;
            s.fallRun = 0;
        } else {
            // A run of frames all beneath the gain (at the quantile, 8 in a row happen once in 10^8 for
            // 0.9) says it is far above where it should be (a filter has just converged): the steps down
            // grow, by a quarter each, to 30 times.
            const int beyond = ++s.fallRun - longRun_;
            g *= std::pow(down_, beyond > 0 ? std::min(30.0, std::pow(1.25, beyond)) : 1.0);
        }
        g = std::clamp(g, 1e-12, maxGain_);
    }
    double sum = 0.0;
    for (const double c : correlation_)
        sum += c;
    meanCorrelation_ = sum / static_cast<double>(correlation_.size());
}

} // namespace quell::aec
