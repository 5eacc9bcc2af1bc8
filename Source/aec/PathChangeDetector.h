// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Decides when the adaptive filter should forget what it learnt: after an echo-path change (someone
// moves the phone, a door opens) a converged RLS with a long memory takes about one memory (0.6 s) or
// more to follow, because the old path's data still dominates its covariance. Restarting the covariance
// (P = I / delta, weights kept) makes it learn the new path within a few filter lengths.
//
// Rule, per 10 ms segment where the far end plays and the microphone is well above the noise floor
// (`aboveNoiseDb` over the quietest output segments; an echo buried in noise says nothing). A segment is
// bad when the output is less than `dropDb` below the microphone while the microphone is no louder than
// `nearEndDb` above the filter's echo estimate: after a path change the stale estimate is about as loud
// as the new echo, while a talking near end makes the microphone louder than any echo estimate (double
// talk is not a path change, and a restart in it lets the near end into the filter). Once the output has shown `convergedDb` of echo
// reduction for `convergedSegments` segments, a run of `dropSegments` segments below `dropDb` triggers a
// restart; then the rule waits for convergence again. (A rule relative to the usual reduction, 12 dB
// below its running mean, was tried: it fired six times in a double-talk scenario of the corpus and
// cost 4 dB of near-end SNR there, for no gain on the path changes.) Double talk looks the same (the output is loud)
// and triggers it too, at most once per episode; that costs nothing audible, because the output comes
// from the foreground filter, which only takes the restarted filter's weights once they cancel better
// (ForegroundEchoFilter).
//
// Threading: any one thread; no allocation.
namespace quell::aec {

struct PathChangeSettings {
    double convergedDb = 20.0;
    int convergedSegments = 5;
    double dropDb = 6.0;
    double nearEndDb = 4.0;
    int dropSegments = 3;
    double activeMeanSquare = 1e-7;   // far end below -70 dBFS: silence, no decision
    double aboveNoiseDb = 15.0;
    double noiseRiseDbPerSegment = 0.02;   // the noise floor (minimum) follows a rising noise at 2 dB/s
    // Only segments whose far end is at least this fraction of its recent peak (decaying by 60 dB in
    // peakDecaySeconds) are judged: the far end is playing now, not ringing out in the room.
    double activeOfPeak = 0.25;
    double peakDecaySeconds = 0.3;
    // After a restart the next one waits at least minHoldoffSeconds; restarts in quick succession double
    // the wait, up to maxHoldoffSeconds.
    double minHoldoffSeconds = 1.0;
    double maxHoldoffSeconds = 16.0;
};

class PathChangeDetector {
public:
    void prepare(const PathChangeSettings& settings);
    void reset();
    // Energies of one segment: microphone, output (echo-cancelled), the filter's echo estimate
    // (microphone - output), far end; `samples` long. Returns true when the filter should restart now.
    bool segment(double micEnergy, double outEnergy, double estimateEnergy, double refEnergy, int samples);
    long restarts() const { return restarts_; }

private:
    PathChangeSettings settings_{};
    double noiseRise_ = 1.0, aboveNoise_ = 1.0, nearEnd_ = 1.0;   // the dB settings as power ratios
    int good_ = 0, bad_ = 0;
    bool converged_ = false;
    double noise_ = -1.0;   // mean square of the quietest output segments; < 0: none yet
    double refPeak_ = 0.0, peakDecay_ = 0.95;
    long holdoff_ = 100, minHoldoff_ = 100, maxHoldoff_ = 1600, sinceRestart_ = 1600;   // in segments
    long restarts_ = 0;
};

} // namespace quell::aec
