// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Whether the adaptive filter should learn from the next segment: only while the far end could explain a
// part of what the microphone hears. RLS is indifferent to the far end's level: a far end of line noise
// at -90 dBFS under a talking near end is, to it, as good a regressor as speech, and it learns to
// predict the near end through it (weights 60 dB too large, measured on the corpus), winds up its
// covariance in every direction the faint far end does not excite, and re-initialises. The absolute
// silence floor of the filter (-100 dBFS) cannot see this; a level relative to the microphone can.
//
// Rule, per segment: adapt when the far end's energy times the echo path's power gain is at least
// `minShareDb` of the microphone's energy (the echo the far end can make is a few percent of what is
// heard or more). The gain starts at `initialGainDb` (a loudspeaker far louder than any hands-free device
// couples) and then follows the foreground filter's own estimate of it, echo estimate over far end, on
// segments where that filter has shown it cancels (`convergedDb` of reduction): a filter that cancels
// knows the path. Double talk at any sensible ratio keeps adapting (the foreground's probation, not this
// gate, keeps the near end out of the output); a far end of noise tens of dB under the microphone does
// not.
//
// A share of the segment is not enough in the near end's pauses, where the microphone falls to its noise
// floor: a far end of line noise at -70 dBFS, with the generous initial gain, could make an echo as loud
// as a quiet room's noise, and what learnt from it there (the filter; the suppressor's far-end models,
// to which a far end this gate pauses on is silence) had to unlearn it when the far end began: the
// corpus's far end that starts after 6 s of near-end speech over such a line, Kalman filter, steady ERLE
// 12.7 dB before this rule, 26.1 with it. So the echo the far end could make must also rise above the
// microphone's noise floor (its segment energy's minimum, rising slowly after it) by `minAboveFloorDb`
// while the gain is only assumed. Not once a cancelling filter has measured it: then the share says what
// the far end can explain, and the floor rule paused RLS on the far end's quiet syllables at 10 dB ENR
// (GPU RLS 4096 on the corpus's two rooms: 1 dB less steady ERLE with it).
//
// Threading: any one thread; no allocation.
namespace quell::aec {

struct AdaptationGateSettings {
    double minShareDb = -35.0;
    double initialGainDb = 10.0;
    double convergedDb = 15.0;
    double gainMemorySegments = 100.0;   // 1 s of 10 ms segments
    double minAboveFloorDb = 10.0;
    double floorRiseDbPerSegment = 0.01;   // 1 dB/s at 10 ms segments
};

class AdaptationGate {
public:
    void prepare(const AdaptationGateSettings& settings = {});
    void reset();
    // One segment's energies: microphone, far end (all channels), the foreground's output and its echo
    // estimate (microphone - output). Returns whether the filter should adapt on the next segment.
    bool segment(double micEnergy, double farEnergy, double outEnergy, double estimateEnergy);
    // The echo path's power gain in use, in dB.
    double echoGainDb() const;
    // Whether a cancelling filter has measured the echo path's gain (until then it is assumed).
    bool gainMeasured() const { return gainMeasured_; }
    // Segments the filter was told not to adapt on.
    long pausedSegments() const { return paused_; }

private:
    AdaptationGateSettings settings_{};
    double minShare_ = 0.003, converged_ = 30.0, gain_ = 10.0, initialGain_ = 10.0, averaging_ = 0.01;
    double minAboveFloor_ = 10.0, floorRise_ = 1.0;
    double floor_ = -1.0;       // the microphone's noise floor (segment energy); < 0 before the first
    bool gainMeasured_ = false;
    long paused_ = 0;
};

} // namespace quell::aec
