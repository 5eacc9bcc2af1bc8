// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How far the echo stands above the microphone's noise, as an adaptive filter sees it, and whether that
// is low: the power of the filter's echo estimate (microphone less its error) while the far end plays,
// over the floor of its error's power (minimum statistics: the noise, and what is left of the echo).
// Fed a segment at a time (the segments of SegmentLeader, 10 ms at 16 kHz); nothing here needs the rate
// but the segment's duration.
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
// sits within 1 dB of the noise; the ratio errs high by that, and the thresholds allow for it.
//
// Threading: one thread; nothing allocates.
#include <cstddef>

namespace quell::aec {

struct EchoToNoiseSettings {
    double segmentSeconds = 0.01;
    // low() becomes true once the ratio has stayed below lowBelowDb for holdSeconds, and false as soon as
    // it rises above highAboveDb.
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
    // The ratio in dB (0 until the far end has played and the floor is known).
    double db() const;
    bool low() const { return low_; }

private:
    EchoToNoiseSettings settings_;
    double floorRise_ = 1.0, echoAveraging_ = 0.02;
    int holdSegments_ = 100;
    double farMean_ = 0.0, error_ = 0.0, floor_ = 0.0, echo_ = 0.0;
    long segments_ = 0, echoSegments_ = 0;
    int belowRun_ = 0;
    bool low_ = false;
};

} // namespace quell::aec
