// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Exact exponentially weighted RLS for one far-end channel at O(N) per sample: the stabilised fast
// transversal filter (FTF; Cioffi and Kailath 1984, stabilised by Slock and Kailath 1991). The same
// least-squares solution as dsp::Rls, sample for sample (weights within 1e-7 of Rls<double> in the
// tests), without P: the gain P u is propagated from the last sample's through a forward and a backward
// linear predictor of the far end, because the regressor only shifts by one sample. About 9 N
// multiply-adds per sample in float64: 4096 taps at 16 kHz cost a tenth of a core here, where dsp::Rls
// needs N^2 (several cores at 1024 taps). What it cannot do: several far-end channels (dsp::StereoFastRls
// takes two, the same recursion on the channels interleaved), and a covariance it could show or bound.
//
// The FTF is known for its numerical fragility; what keeps this one well:
//  - The stabilisation: the backward prediction error is computed twice (directly, and from the gain's
//    last element) and their difference is fed back with gains 1.5 / 2.5 / 1 (Slock and Kailath).
//  - A start the recursion can follow: the predictors start from a prewindowed past (the far end before
//    a start or restart taken as zero, in the predictors' own copy of it) with forward and backward error
//    energies epsilon and epsilon x lambda^-N, which is exactly the RLS's P(0) = I / epsilon in the
//    FTF's variables. A restart that kept the real past broke the recursion one filter length later
//    (the backward energy turned negative: physical corpus, 4096 taps, a restart every 4100 samples).
//  - epsilon = initialEnergyPerDelta x delta (RlsSettings::delta, the RLS's P(0) = I / delta): at the
//    RLS's own 0.03, speech far ends broke the recursion a few thousand samples after a start in 13 of
//    the physical corpus's 33 mono files (a re-start each time); at 0.3, in none (Tests/eval: steady ERLE
//    mean 28.1 -> 29.2 dB).
//  - A dither of -100 dBFS on the predictors' copy of the far end: in a digitally silent far end the
//    predictors' energies would decay as lambda^n and the first sample after the silence would meet a
//    gain of that size (the RLS pauses instead, which the shifting regressor does not allow). The
//    filter's own output uses the far end as it is. A far end that excites few directions for long
//    leaves the others' energies at the dither's: broadband noise after 8 s of a lone 1 kHz tone at
//    -29 dBFS breaks the recursion once (a restart, FastRlsTests) with -100 dBFS, and at -60 dBFS would
//    not, but that dither moved the weights by 1e-2 of their size on coloured noise (the physical
//    corpus's telephone-band far end restarts at neither). Over 20 minutes of the corpus's 40 mono files
//    one after another (quell-render, CPU defaults) the recursion broke twice, both times 0.5 s into a
//    full-band far end that followed 9 s of the telephone-band one (the predictors had restarted within
//    it); at -60 dBFS of dither it did not, but there the output's reduction over the next 11 s was 10-15 dB
//    less (the restart came with the next file's new echo path, which it helped the weights learn).
//  - The weights learn from the same regressor as the predictors: for N samples after a restart the
//    adaptation's error is the microphone less the weights applied to the predictors' (prewindowed) view
//    of the far end, while the output's uses the far end as it is. With the output's error the gain,
//    which knows nothing of the far end before the restart, met errors that held its echo through the
//    taps not yet filled, and the weights fitted that echo with the newest taps: after an echo-path
//    change their snapshots beat the stale foreground by 6 to 8 dB where it copies at 10 (physical
//    corpus, 4096 taps: the speech path change's steady ERLE 26.1 -> 29.6 dB, the delayed echoes of
//    150 and 300 ms 27.4 -> 28.5 and 28.8 -> 34.0, 500 ms 32.6 -> 31.2; mean over the mono files 29.46
//    -> 29.75, near-end SNR in double talk 32.09 -> 32.23).
//  - A health check on every sample (conversion factor in (0, 1], energies positive and finite); a
//    failure restarts the predictors (counted as a re-initialisation) and keeps the weights.
// Adaptation pauses (the weights stay; the predictors go on) while the far end's mean power over the
// taps is below RlsSettings::silenceFloor, and while setAdaptation(false).
//
// Threading: one thread at a time; process() never allocates after prepare().
#include <cstddef>
#include <span>
#include <vector>

#include "dsp/FtfPauseRule.h"
#include "dsp/RlsSettings.h"

namespace quell::dsp {

class FastRls {
public:
    // One far-end channel (settings.channels == 1) and at least 2 taps (at one the recursion's rounding
    // took the conversion factor over 1 within seconds of noise); throws std::invalid_argument otherwise.
    void prepare(const RlsSettings& settings);
    void reset();
    // P = I / epsilon again (the predictors restart from a zero past) with the weights kept.
    void restartCovariance() { restartPredictors(); }
    // epsilon = initialEnergyPerDelta x delta at every later restart (restartCovariance() and the health
    // check's), until reset() goes back to settings().delta (aec/FarEndLevelMatch.h says why). Throws
    // std::invalid_argument unless positive and finite.
    void setRestartDelta(double delta);
    void setAdaptation(bool on) { adapting_ = on; }
    bool adapting() const { return adapting_; }
    // The forgetting factor from the next sample on, until reset() goes back to settings().lambda; while
    // the predictors are in their first 2 N samples since a start, from the sample after those (a restart
    // takes it at once). The weights, the gain and the energies carry over: the recursion is exact for
    // one lambda only (the shift of the regressor must weight the past as the last sample did), so for
    // about a memory after the change the gain is that of a nearby weighting, which the stabilisation's
    // feedback of the backward error pulls to the new one (FastRlsTests: errors within 3e-3 of an
    // O(N^2) RLS whose lambda changed at the same sample). Sooner after a start the recursion is
    // fragile: a change from a memory of 20 x the taps to 10 x at N / 2 broke it at 16 and 128 taps, and
    // at N at 128 taps (a restart each, with errors 0.3 of the reference's); at 1.6 N the errors were
    // within 3.5e-3, from 3 N within 2.2e-3. Throws std::invalid_argument unless in (0, 1].
    void setLambda(double lambda);
    double lambda() const { return requestedLambda_; }
    // mic = d, ref = x, out = e (a-priori error); the same length; out may alias mic.
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out);
    // Tap 0 the newest sample, as of the end of the last process() call.
    std::span<const float> weights() const { return {weightsOut_.data(), weightsOut_.size()}; }
    const RlsHealth& health() const { return health_; }
    const RlsSettings& settings() const { return settings_; }
    int taps() const { return settings_.tapsPerChannel; }

    // epsilon over delta (see above).
    static constexpr double initialEnergyPerDelta = 10.0;
    static constexpr double predictorDither = 1e-5;   // peak, uniform: about -100 dBFS

private:
    double processSample(double d, double x);
    void restartPredictors();
    void applyPendingStep();

    RlsSettings settings_{};
    std::size_t taps_ = 0;
    double lambda_ = 1.0, epsilon_ = 0.3, silenceEnergy_ = 0.0;
    double requestedLambda_ = 1.0;   // setLambda's, taken by lambda_ as it says
    // The far end, newest first, in rings of 2 (N + 1) so N + 1 samples read forwards from pos_: as it is
    // (the filter's output) and as the predictors see it (zero before their last start, with dither).
    std::vector<double> farEnd_, predictorFarEnd_;
    std::size_t pos_ = 0;
    double windowEnergy_ = 0.0;               // sum of x^2 over the last N samples
    // The forward predictor and the gain P(n-1) u(n) / lambda, each with its next value (two buffers that
    // swap), stored one element in: element -1 holds -1 and 0, which folds the gain's first element into
    // the loop that makes the others (detail::fastRlsPredictorUpdate). The backward predictor, the weights.
    std::vector<double> forwardStore_[2], gainStore_[2], backward_, w_;
    int current_ = 0;                          // which of the two stores holds the forward predictor and gain now
    double* forward() { return forwardStore_[current_].data() + 1; }
    double* gain() { return gainStore_[current_].data() + 1; }
    // The last sample's weight update w += gain pendingStep_, made in the next sample's first pass.
    double pendingStep_ = 0.0;
    bool stepPending_ = false;
    double forwardEnergy_ = 0.0, backwardEnergy_ = 0.0, conversion_ = 1.0;
    unsigned ditherState_ = 1;
    bool adapting_ = true;
    detail::FtfPauseRule pauses_;
    std::size_t sinceStart_ = 0;               // samples since the predictors' start (this one included), up to 2 N
    std::vector<float> weightsOut_;
    RlsHealth health_{};
};

} // namespace quell::dsp
