// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How far the echo stands above the microphone's noise, as an adaptive filter sees it, and whether that
// is low: the power of the filter's echo estimate (microphone less its error) while the far end plays,
// over the floor of its error's power (minimum statistics: the noise, and what is left of the echo).
// Fed a segment at a time (the segments of SegmentLeader: 160 samples, 10 ms at 16 kHz, where the canceller
// runs by default). Its times are given in seconds at that duration; at another rate the ladder passes
// them as they are, so they scale with the rate as its filters' memories do (those are counted in samples).
//
// Why: least squares with a memory of L samples keeps about taps / 2L of the noise's power in its error,
// so the memory that suits a filter depends on this ratio. At 30 dB and more the noise's share is far
// below what else a filter leaves (its tail, its tracking), and a short memory follows a path change or
// forgets a double talk sooner; at 10 dB it is the error (CpuRlsFilter.cpp's ladder says what it does
// with the verdict).
//
// The floor is the lowest error power of segments smoothed over about 30 ms, rising at
// floorRiseDbPerSecond while the error is above it (a near end's speech has pauses; stationary noise is
// there in all of them). Smoothed, a segment of white noise has a spread of a few per cent, so the floor
// sits within 1 dB of the noise; the ratio errs high by that, and the thresholds allow for it. Segments
// whose error is exactly 0 leave the floor alone, and until the far end has played and the floor is known
// there is no verdict. A floor found in a quiet start sits under the noise that follows until it has risen
// to it: the ratio errs high meanwhile, the safe side (the automatic memory).
//
// The verdict counts segments where the far end plays (FarEndPlay: its energy a quarter of its recent
// mean or more): holdSeconds of them below lowBelowDb, in a row, however the far end's pauses spread them.
// At every start the ratio is low until the filter has converged; a verdict that comes in that time is
// usually dropped within a few segments (dsp::FastRls::setLambda defers a change for 2 N samples after its
// predictors' start, which absorbs most of these).
//
// Threading: one thread; nothing allocates.
#include <cstddef>

#include "aec/FarEndPlay.h"

namespace quell::aec {

struct EchoToNoiseSettings {
    double segmentSeconds = 0.01;
    // low() becomes true once the ratio has stayed below lowBelowDb for holdSeconds of far-end play, and
    // false as soon as it rises above highAboveDb.
    double lowBelowDb = 20.0;
    double highAboveDb = 24.0;
    double holdSeconds = 0.1;
    double floorRiseDbPerSecond = 2.0;
    double echoSeconds = 0.5;   // the echo estimate's power: mean over about this much of far-end play
};

class EchoToNoiseMeter {
public:
    explicit EchoToNoiseMeter(const EchoToNoiseSettings& settings = {});
    void reset();
    // One segment's energies (sums of squares over its samples): the far end, the filter's echo
    // estimate (mic - error) and its error.
    void addSegment(double farEnergy, double echoEnergy, double errorEnergy);
    // Whether the ratio is known: the far end has played, and the echo estimate and the floor have power.
    bool known() const;
    // The ratio in dB (0 while not known).
    double db() const;
    bool low() const { return low_; }

private:
    EchoToNoiseSettings settings_;
    double floorRise_ = 1.0, echoAveraging_ = 1.0;   // (set from the settings)
    int holdSegments_ = 1;
    FarEndPlay farPlay_{0.0};
    double error_ = 0.0, floor_ = 0.0, echo_ = 0.0;
    long errorSegments_ = 0, echoSegments_ = 0;
    int belowRun_ = 0;
    bool low_ = false;
};

} // namespace quell::aec
