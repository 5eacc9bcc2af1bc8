// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// RLS's delta (P = I / delta at a start) is a prior of a fixed size, chosen for a far end at speech level
// (the corpus's -26 dBFS). Against a quieter far end the same prior weighs more: the fit needs as many
// more samples to outgrow it as the far end is quieter, and until it has, the weights fall short of the
// path. Measured (CPU defaults, corpus files with every component 10 and 20 dB quieter,
// Tests/eval/results/2026-11-28/far-end-level): a white far end's steady ERLE 40.7 -> 35.0 -> 23.4 dB,
// double talk's near end after the fit 39.9 -> 37.1 -> 27.0; with delta scaled by the far end's power
// from the start, the loud files' figures at every level. So delta follows the far end's level, with
// three things in view:
//  - The fixed prior is also what keeps RLS out of a faint far end that makes no echo: a line's noise at
//    -50 dBFS under a talking near end, with delta scaled to it, gave the near end's SNR after the fit
//    18 dB where it is 122 (the filter learnt to predict the near end through the line). So nothing
//    changes until the filter has shown an echo: a segment it learnt from whose output is `echoShownDb`
//    under the microphone.
//  - A level taken from a speech onset's first tens of milliseconds is too low, and the fast RLS's
//    recursion, restarted with a prior that small against the speech that follows, broke (re-
//    initialisations on the corpus's speech files). So the level is the peak of the learnt segments'
//    power (decaying by `peakDecayPerSegment`, about 4.4 dB a second), taken only after
//    `minLearntSegments`, and `referenceDbfs` is a peak level.
//  - The match must come early: the fast RLS restarts its predictors from a zero past, and for a filter
//    length after the restart its weights learn from that; the later the restart, the longer that stays
//    in a 2.5 s memory. Matched after 30 learnt segments (with the level a mean), CI's 5 s double talk
//    20 dB down kept its near end at 16.8 dB after the fit; with this rule 41.0 (its full-level twin: 42.7).
// At the match delta becomes the automatic one scaled by the level against the reference (never above
// the automatic delta, at most `maxReductionDb` below it) and the covariance restarts with it, the weights
// kept: only where that lowers delta by `restartDb` or more, as a restart is not free (music 10 dB down
// lost 2.3 dB of steady ERLE to one). From then on delta follows the level in steps of `stepDb`, for the
// restarts that come anyway (path changes, alignment moves, the filter's own health check). The CPU RLS
// filters and the GPU block RLS (per stream of a batch) take the delta; the Kalman filter and NLMS have
// no such prior.
//
// Threading: any one thread; no allocation.
namespace quell::aec {

struct FarEndLevelMatchSettings {
    double referenceDbfs = -24.0;   // peak segment power (10 log10 of the mean square) at which delta stays the automatic one
    double maxReductionDb = 20.0;
    double restartDb = 6.0;
    double echoShownDb = 3.0;
    int minLearntSegments = 10;
    double peakDecayPerSegment = 0.99;
    double stepDb = 3.0;
};

class FarEndLevelMatch {
public:
    // automaticDelta: the filter's own (RlsSettings::delta). Throws std::invalid_argument on bad settings.
    void prepare(double automaticDelta, const FarEndLevelMatchSettings& settings = {});
    void reset();

    struct Segment {
        double farPower = 0.0;     // the far end's mean square per sample and channel
        double micEnergy = 0.0;    // the microphone's and the output's energies over the segment
        double outEnergy = 0.0;
        bool learnt = false;       // whether the adaptive filter learnt from it
    };
    struct Decision {
        bool newDelta = false;     // the filter's restart delta becomes delta()
        bool restart = false;      // and its covariance restarts now
    };
    Decision segment(const Segment& s);

    double delta() const { return delta_; }
    // The far end's peak level over the learnt segments, in dBFS (-inf before the first).
    double levelDbfs() const;
    bool matched() const { return matched_; }

private:
    FarEndLevelMatchSettings settings_{};
    double automaticDelta_ = 0.01, delta_ = 0.01;
    double reference_ = 1e-3, minScale_ = 0.01, restartScale_ = 0.25, echoShown_ = 2.0, step_ = 2.0;
    double peak_ = 0.0;
    long learnt_ = 0;
    bool echoSeen_ = false, matched_ = false;
};

} // namespace quell::aec
