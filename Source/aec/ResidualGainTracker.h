// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How much of a predictor's power is left as residual echo in the canceller's output, per frequency band:
// residual_b = gain_b x predictor_b. The residual echo suppressor runs two of these: one whose predictor is
// the far end's (reverberant) power spectrum, which sees the echo a linear filter cannot model (a
// loudspeaker driven into distortion, a device's compressor and rattle, the room's tail beyond the taps),
// and one whose predictor is the linear filter's own echo estimate.
//
// The gain is an upper quantile (`quantile`, 0.9) of the ratio of the output's power above the noise
// floor to the predictor's, over the frames where the predictor carries power now: in far-end single
// talk the output is residual echo and noise, and the quantile of their ratio is where the echo lies at
// most, frame after frame (the power of a device's echo wanders by 6 to 10 dB around any prediction from
// the far end's; a mean would leave half the frames' echo unsuppressed). It is tracked by steps in dB: down
// by `fallDbPerSecond` when a frame's ratio is beneath it, up by quantile / (1 - quantile) times that when
// above, so it settles where a `quantile` of the frames lie beneath it; a long run of frames beneath it
// (a filter has just converged) speeds the fall up. A frame far above the gain (`nearEndDb`) is the near
// end talking, not echo, and moves it up only at `slowRiseDbPerSecond`: double talk must not teach the
// suppressor that the near end is echo. It starts at `initialDb`, below where a filter that has not
// converged leaves the echo, and rises to it within a second of far-end speech: starting higher, it took
// seconds to come down once the linear filter converged and meanwhile replaced the noise of a converged
// output with comfort noise.
//
// The quantile alone cannot tell residual echo from the output's noise and near end: a filter that
// cancels well leaves noise whose fluctuations have a quantile too. So a band is used only where its
// output follows the predictor, frame by frame: correlation of their powers of at least `minCorrelation`
// over `variationSeconds` (noise and a near end are independent of the far end; residual echo is not).
// And a predictor whose power hardly varies (a far end of stationary line noise; `minVariation`, the
// variance over the squared mean of its band power) cannot tell echo from anything: not used either. The
// variation is that of the predictor's envelope (its power smoothed over `envelopeSeconds`), not of its
// frames: a band of two or three bins of stationary noise fluctuates frame by frame by a variance of a
// third to a half of its squared mean, and so passed for varying: with the far-end models' correlation
// at 0.1, a line's speech-shaped noise at -50 dBFS then had a headset's near end suppressed (near-end SNR
// after the fit 38.3 dB instead of 122 with no echo at all); speech's syllables vary its envelope as much
// as its frames.
//
// Threading: prepare() off the real-time thread; update() from one thread; no allocation after prepare.
#include <cstddef>
#include <span>
#include <vector>

namespace quell::aec {

struct ResidualGainSettings {
    double quantile = 0.9;
    double fallDbPerSecond = 3.0;
    double slowRiseDbPerSecond = 0.5;
    double nearEndDb = 20.0;
    double initialDb = -20.0;
    double maxGainDb = 20.0;
    double minVariation = 0.3;
    double minCorrelation = 0.3;
    double presentFraction = 0.5;
    double variationSeconds = 2.0;
    double envelopeSeconds = 0.032;
    bool operator==(const ResidualGainSettings&) const = default;
};

class ResidualGainTracker {
public:
    // bands: the number of bands update() receives; framesPerSecond: the rate of update() calls.
    void prepare(std::size_t bands, double framesPerSecond, const ResidualGainSettings& settings = {});
    void reset();
    // One frame's band powers: the output above its noise floor (not negative), the predictor (with its
    // reverberant tail), and the predictor's power in this frame alone (without the tail), which says
    // where the gain may learn: in the tail after a burst the output may hold nothing but noise.
    void update(std::span<const double> output, std::span<const double> predictor, std::span<const double> present);
    // The residual-to-predictor power ratio of a band (0 where the predictor cannot be used).
    double gain(std::size_t band) const { return used_[band] ? gain_[band] : 0.0; }
    // The band's tracked ratio in dB, used or not (for reports).
    double trackedDb(std::size_t band) const;
    // The correlation of a band's output power with its predictor's over `variationSeconds`, and its mean
    // over the bands.
    double correlation(std::size_t band) const { return correlation_[band]; }
    double meanCorrelation() const { return meanCorrelation_; }

private:
    struct Band {
        double meanPresent = 0.0, meanPredictor = 0.0, meanOut = 0.0, variance = 0.0, varianceOut = 0.0, covariance = 0.0;
        double envelope = 0.0, meanEnvelope = 0.0, varianceEnvelope = 0.0;
        int fallRun = 0;   // frames in a row beneath the gain
    };
    ResidualGainSettings settings_{};
    std::vector<Band> bands_;
    std::vector<double> gain_;
    std::vector<char> used_;
    std::vector<double> correlation_;
    double up_ = 1.0, slowUp_ = 1.0, down_ = 1.0, nearEnd_ = 10.0, maxGain_ = 100.0, initial_ = 1.0, averaging_ = 0.01, envelopeSmoothing_ = 0.125, meanCorrelation_ = 0.0;
    long frames_ = 0;
    int longRun_ = 8;
};

} // namespace quell::aec
