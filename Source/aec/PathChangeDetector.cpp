#include "aec/PathChangeDetector.h"

#include <algorithm>
#include <cmath>

namespace quell::aec {

void PathChangeDetector::prepare(const PathChangeSettings& settings)
{
    settings_ = settings;
    noiseRise_ = std::pow(10.0, settings.noiseRiseDbPerSegment / 10.0);
    aboveNoise_ = std::pow(10.0, settings.aboveNoiseDb / 10.0);
    nearEnd_ = std::pow(10.0, settings.nearEndDb / 10.0);
    reset();
}

void PathChangeDetector::reset()
{
    good_ = bad_ = 0;
    converged_ = false;
    restarts_ = 0;
    noise_ = -1.0;
}

bool PathChangeDetector::segment(double micEnergy, double outEnergy, double estimateEnergy, double refEnergy, int samples)
{
    if (samples <= 0 || !(micEnergy > 0.0))
        return false;
    const double outMean = outEnergy / samples;
    if (noise_ < 0.0 || outMean < noise_)
        noise_ = outMean;
    else
        noise_ *= noiseRise_;
    if (refEnergy < settings_.activeMeanSquare * samples
        || micEnergy / samples < noise_ * aboveNoise_)
        return false;
    const double reductionDb = 10.0 * std::log10(micEnergy / std::max(outEnergy, 1e-30));
    if (!converged_) {
        good_ = reductionDb >= settings_.convergedDb ? good_ + 1 : 0;
        if (good_ >= settings_.convergedSegments) {
            converged_ = true;
            bad_ = 0;
        }
        return false;
    }
    const bool nearEndTalks = micEnergy > estimateEnergy * nearEnd_;
    bad_ = reductionDb < settings_.dropDb && !nearEndTalks ? bad_ + 1 : 0;
    if (bad_ < settings_.dropSegments)
        return false;
    converged_ = false;
    good_ = bad_ = 0;
    ++restarts_;
    return true;
}

} // namespace quell::aec
