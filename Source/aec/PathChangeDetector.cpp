// SPDX-License-Identifier: GPL-3.0-or-later
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
    // 60 dB per peakDecaySeconds, per 10 ms segment (the detector is fed 10 ms segments).
    peakDecay_ = std::pow(10.0, -6.0 * 0.01 / settings.peakDecaySeconds);
    minHoldoff_ = std::max(1L, std::lround(settings.minHoldoffSeconds / 0.01));
    maxHoldoff_ = std::max(minHoldoff_, std::lround(settings.maxHoldoffSeconds / 0.01));
    reset();
}

void PathChangeDetector::reset()
{
    good_ = bad_ = 0;
    converged_ = false;
    restarts_ = 0;
    noise_ = -1.0;
    refPeak_ = 0.0;
    holdoff_ = minHoldoff_;
    sinceRestart_ = maxHoldoff_;   // the first restart is never held off
}

bool PathChangeDetector::segment(double micEnergy, double outEnergy, double estimateEnergy, double refEnergy, int samples)
{
    ++sinceRestart_;
    if (samples <= 0 || !(micEnergy > 0.0))
        return false;
    const double outMean = outEnergy / samples;
    if (noise_ < 0.0 || outMean < noise_)
        noise_ = outMean;
    else
        noise_ *= noiseRise_;
    // The far end's recent peak, decaying at the room's pace: a segment after the far end fell well below
    // it is the room's reverberation of what came before, which a filter shorter than the room leaves
    // (at 1024 taps in a 0.3 s room, 10 to 15 dB of the echo): judged there, every phrase's end looked
    // like a path change (13 restarts in 12 s of the corpus's RT60 0.3 s speech).
    refPeak_ = std::max(refEnergy, refPeak_ * peakDecay_);
    if (refEnergy < settings_.activeMeanSquare * samples || refEnergy < settings_.activeOfPeak * refPeak_
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
    if (bad_ < settings_.dropSegments || sinceRestart_ < holdoff_)
        return false;
    // Restarts that follow each other closely are not path changes but a filter that cannot do better
    // (a room longer than the taps, echo no linear filter models): each one would only cost a
    // re-convergence. The hold-off doubles while they come within three hold-offs of each other.
    holdoff_ = sinceRestart_ < 3 * holdoff_ ? std::min(2 * holdoff_, maxHoldoff_) : minHoldoff_;
    sinceRestart_ = 0;
    converged_ = false;
    good_ = bad_ = 0;
    ++restarts_;
    return true;
}

} // namespace quell::aec
