// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How much of one signal is a linear function of another over the last fraction of a second, per band:
// the magnitude-squared coherence of their spectra, bin by bin, from cross- and auto-spectra averaged with
// exponential forgetting of time constant `seconds`, pooled over a band's bins (sum of |S_ab|^2 over sum of
// S_aa S_bb: a weighted mean of the bins' coherences, the bins with power counting most); and the mean
// over the bands.
//
// The residual echo suppressor asks it whether its output is made of the same sound as the linear filter's
// echo estimate (residual echo: both are the far end through paths in the room) or of another (a near end,
// noise). Unlike the band powers' following (BandFollowing), it looks at phases: a near end whose level
// happens to move with the far end's, as a test signal with the far end's own envelope does, has no
// coherence with the echo estimate, however closely its level follows.
//
// Bands without power in either signal count as 0, and the mean is over all the bands: at 48 kHz, with
// more bands above speech's range than at 16 kHz, the same signals give a lower mean. The estimate of an
// independent pair is biased upward by about one over the number of frames that count in the time
// constant: 0.02 to 0.04 for the front ends' test near end (a steady level), 0.15 for a signal whose level
// wanders 8 dB from frame to frame (the loud frames dominate the averages; BandCoherenceTests.cpp). It is
// one witness among several: the suppressor's threshold (0.1) is under that worst case, and the rule's
// other conditions keep such a near end out.
//
// Threading: prepare() off the real-time thread; update() from one thread; no allocation after prepare.
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

namespace quell::aec {

class BandCoherence {
public:
    // bandOfBin: each bin's band (bins are the spectra's first bandOfBin.size() entries; bands are numbered
    // from 0 up, each with a bin); framesPerSecond: the rate of update() calls; seconds: the time constant of
    // the averages. Throws std::invalid_argument on bad arguments.
    void prepare(std::span<const std::size_t> bandOfBin, double framesPerSecond, double seconds);
    void reset();
    // One frame's spectra (at least as many bins as prepare's bandOfBin).
    void update(std::span<const std::complex<float>> a, std::span<const std::complex<float>> b);
    std::size_t bands() const { return coherence_.size(); }
    double coherence(std::size_t band) const { return coherence_[band]; }
    double meanCoherence() const { return meanCoherence_; }

private:
    std::vector<std::size_t> bandOf_;
    std::vector<std::complex<double>> cross_;
    std::vector<double> powerA_, powerB_;
    std::vector<double> crossSum_, productSum_;   // per band, scratch of update()
    std::vector<double> coherence_;
    double weight_ = 0.03, meanCoherence_ = 0.0;
};

} // namespace quell::aec
