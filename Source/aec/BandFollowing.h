// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How closely a signal's band powers follow a reference's over the last fraction of a second: per band,
// the correlation of the two log powers, frame by frame, each frame weighted by the signal's power and
// by exponential forgetting of time constant `seconds`; and its mean over the bands. The residual echo
// suppressor asks it whether its output, right now, moves with the far end (residual echo the linear
// filter let through) or at its own pace (a near end).
//
// Log powers: within the frames that count, every frame of a phrase counts, not only a syllable's peak.
// Weighted by the signal's power: where the output has just risen 10 to 20 dB, its loud new frames say
// what it is, not the quiet ones before them. Unweighted, the window still held a converged filter's
// residual, which follows the far end, and a near end's onset under a far end that talked on passed for
// an echo burst for 8 frames (32 ms), at a new far-end talker's onset for 41 (the suppressor's unit test;
// weighted: none). Bands whose signal or reference has not varied (a constant, digital silence) have no
// correlation and count as 0.
//
// Threading: prepare() off the real-time thread; update() from one thread; no allocation after prepare.
#include <cstddef>
#include <span>
#include <vector>

namespace quell::aec {

class BandFollowing {
public:
    // bands: the number of bands update() receives; framesPerSecond: the rate of update() calls; seconds:
    // the time constant of the averages. Throws std::invalid_argument on bad arguments.
    void prepare(std::size_t bands, double framesPerSecond, double seconds);
    void reset();
    // One frame's band powers (not negative) of the signal and the reference.
    void update(std::span<const double> signal, std::span<const double> reference);
    double correlation(std::size_t band) const { return correlation_[band]; }
    double meanCorrelation() const { return meanCorrelation_; }

private:
    struct Band {
        // Exponential averages of the frames' weights and of their weighted log powers and products.
        double weight = 0.0, sumX = 0.0, sumY = 0.0, sumXX = 0.0, sumYY = 0.0, sumXY = 0.0;
    };
    std::vector<Band> bands_;
    std::vector<double> correlation_;
    double weight_ = 0.03, meanCorrelation_ = 0.0;
};

} // namespace quell::aec
