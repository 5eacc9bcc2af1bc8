// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Exact exponentially weighted RLS for two far-end channels at O(N) per sample: the two-channel fast
// transversal filter. dsp::FastRls's recursion with the far end's sample a pair: the regressor holds the
// channels interleaved (x0(n), x1(n), x0(n-1), x1(n-1), ..), which shifts by one pair per sample, so the
// gain P u is again propagated through a forward and a backward predictor; each predicts a pair, its
// error is a pair and its error energy a 2 x 2 matrix. The same least squares as dsp::Rls with two
// channels, sample for sample (the tests compare with Rls<double>), at about 30 N multiply-adds per
// sample in float64 (N taps per channel), where dsp::Rls needs 4 N^2.
//
// Why: a stereo far end whose channels differ (two talkers picked up by a spaced pair) leaves the
// frequency-domain Kalman filter 12 dB of linear reduction under a near-end talker, and the CPU's
// float32 Rls at 2 x 1024 taps 16 dB; the room's tail needs 2 x 4096 taps, which only an O(N) recursion
// runs in real time on a CPU.
//
// What keeps it well is dsp::FastRls's, pair for pair (its header says why each is there): the same
// stabilisation (the backward error computed directly and from the gain, mixed 1.5 / 2.5 / 1, each
// channel's component alike), the prewindowed start with energies epsilon I and epsilon lambda^-N I, the
// dither of the predictors' copy of the far end (a sequence of its own for each channel: with one
// sequence, a far end that is one signal in both channels would leave the predictors a pair they can
// never tell apart, and the forward energy's determinant would fall to the rounding), the weights
// learning from the predictors' view until it has filled, the pause on a silent far end (the mean power
// of both channels), and the health check on every sample, which restarts the predictors and keeps the
// weights. The check differs in one way: the forward energy is updated directly (lambda alpha + gamma
// e e^T, positive definite by construction where FastRls's inverse form could turn negative), so a break
// shows in the conversion factor and the backward energy (positive definite), and the forward energy is
// checked only for being finite.
//
// Threading: one thread at a time; process() never allocates after prepare().
#include <cstddef>
#include <span>
#include <vector>

#include "dsp/FtfPauseRule.h"
#include "dsp/RlsSettings.h"

namespace quell::dsp {

class StereoFastRls {
public:
    // Two far-end channels (settings.channels == 2) and at least 2 taps per channel; throws
    // std::invalid_argument otherwise.
    void prepare(const RlsSettings& settings);
    void reset();
    void restartCovariance() { restartPredictors(); }
    // As FastRls::setRestartDelta.
    void setRestartDelta(double delta);
    void setAdaptation(bool on) { adapting_ = on; }
    bool adapting() const { return adapting_; }
    // mic = d, ref = x with the two channels interleaved (2 x mic.size() values), out = e (a-priori
    // error, mic's length); out may alias mic.
    void processInterleaved(std::span<const float> mic, std::span<const float> ref, std::span<float> out);
    // Channel after channel, as dsp::Rls (channel 0's taps, then channel 1's), tap 0 the newest sample.
    std::span<const float> weights() const { return {weightsOut_.data(), weightsOut_.size()}; }
    const RlsHealth& health() const { return health_; }
    const RlsSettings& settings() const { return settings_; }
    int taps() const { return settings_.tapsPerChannel; }

    static constexpr double initialEnergyPerDelta = 10.0;   // as FastRls
    static constexpr double predictorDither = 1e-5;         // as FastRls, each channel its own sequence

private:
    double processSample(double d, double x0, double x1);
    void restartPredictors();
    void applyPendingStep();

    RlsSettings settings_{};
    std::size_t taps_ = 0;   // per channel; the regressor holds 2 x taps_
    double lambda_ = 1.0, epsilon_ = 0.3, silenceEnergy_ = 0.0;
    // The far end, newest pair first, in rings of 2 (N + 1) pairs so that N + 1 pairs read forwards from
    // pos_: as it is (the filter's output) and as the predictors see it.
    std::vector<double> farEnd_, predictorFarEnd_;
    std::size_t pos_ = 0;     // in pairs
    double windowEnergy_ = 0.0;
    // Each stored two elements in, where the element pair -2, -1 folds the extended gain's first pair
    // into the loop (detail::stereoFastRlsPredictorUpdate): the forward predictors of channel 0 and 1
    // and the gain, each with its next value (two buffers that swap); the backward predictors; the weights.
    std::vector<double> forwardStore_[2][2], gainStore_[2], backward_[2], w_;
    int current_ = 0;
    double* forward(int channel) { return forwardStore_[current_][channel].data() + 2; }
    double* gain() { return gainStore_[current_].data() + 2; }
    double pendingStep_ = 0.0;
    bool stepPending_ = false;
    // The forward and backward error energies (symmetric 2 x 2: [0][0], [0][1], [1][1]).
    double forwardEnergy_[3] = {}, backwardEnergy_[3] = {};
    double conversion_ = 1.0;
    unsigned ditherState_[2] = {1, 2};
    bool adapting_ = true;
    detail::FtfPauseRule pauses_;
    std::size_t sinceStart_ = 0;   // pairs since the predictors' start, up to N
    std::vector<float> weightsOut_;
    RlsHealth health_{};
};

} // namespace quell::dsp
