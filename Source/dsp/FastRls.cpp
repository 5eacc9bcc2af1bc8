// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/FastRls.h"

#include "dsp/FastRlsKernels.h"
#include "dsp/FtfPauseRule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace quell::dsp {

namespace {
// The conversion factor 1 / (1 + u^T P u / lambda) never exceeds 1 in exact arithmetic; rounding takes it
// up to 4e-4 over at one tap (measured; 1 then), a broken recursion far more.
constexpr double kConversionSlack = 1e-3;
} // namespace

void FastRls::prepare(const RlsSettings& settings)
{
    validate(settings);
    if (settings.channels != 1)
        throw std::invalid_argument("fast RLS takes one far-end channel (got " + std::to_string(settings.channels) + ")");
    if (settings.tapsPerChannel < 2)
        throw std::invalid_argument("fast RLS needs at least 2 taps (got " + std::to_string(settings.tapsPerChannel) + ")");
    settings_ = settings;
    taps_ = static_cast<std::size_t>(settings.tapsPerChannel);
    lambda_ = requestedLambda_ = settings.lambda;
    silenceEnergy_ = settings.silenceFloor * double(taps_);
    farEnd_.assign(2 * (taps_ + 1), 0.0);
    predictorFarEnd_.assign(2 * (taps_ + 1), 0.0);
    for (int b = 0; b < 2; ++b) {
        forwardStore_[b].assign(taps_ + 1, 0.0);
        forwardStore_[b][0] = -1.0;
        gainStore_[b].assign(taps_ + 1, 0.0);
    }
    backward_.assign(taps_, 0.0);
    w_.assign(taps_, 0.0);
    weightsOut_.assign(taps_, 0.0f);
    reset();
}

void FastRls::setRestartDelta(double delta)
{
    validateDelta(delta);
    epsilon_ = initialEnergyPerDelta * delta;
}

void FastRls::setLambda(double lambda)
{
    if (!(lambda > 0.0 && lambda <= 1.0))
        throw std::invalid_argument("FastRls::setLambda: lambda must be in (0, 1]");
    requestedLambda_ = lambda;
}

void FastRls::reset()
{
    requestedLambda_ = settings_.lambda;
    setRestartDelta(settings_.delta);
    std::fill(farEnd_.begin(), farEnd_.end(), 0.0);
    std::fill(w_.begin(), w_.end(), 0.0);
    std::fill(weightsOut_.begin(), weightsOut_.end(), 0.0f);
    pos_ = 0;
    windowEnergy_ = 0.0;
    pauses_.reset();
    health_ = {};
    stepPending_ = false;
    restartPredictors();
}

void FastRls::restartPredictors()
{
    // (The dither's sequence starts again with them: what follows a start does not depend on how long the
    // far end was silent before it, as a host's leading silence differs from a file's.)
    ditherState_ = 1;
    std::fill(predictorFarEnd_.begin(), predictorFarEnd_.end(), 0.0);
    applyPendingStep();
    for (int b = 0; b < 2; ++b) {
        std::fill(forwardStore_[b].begin() + 1, forwardStore_[b].end(), 0.0);
        std::fill(gainStore_[b].begin() + 1, gainStore_[b].end(), 0.0);
    }
    std::fill(backward_.begin(), backward_.end(), 0.0);
    lambda_ = requestedLambda_;
    forwardEnergy_ = epsilon_;
    backwardEnergy_ = epsilon_ * std::pow(lambda_, -double(taps_));
    conversion_ = 1.0;
    pauses_.predictorsStarted();
    sinceStart_ = 0;
}

void FastRls::process(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
{
    if (mic.size() != ref.size() || out.size() < mic.size())
        throw std::invalid_argument("FastRls::process: mic, ref and out must have the same length");
    for (std::size_t n = 0; n < mic.size(); ++n) {
        float d = mic[n], x = ref[n];
        if (!std::isfinite(d)) {
            d = 0.0f;
            ++health_.sanitisedSamples;
        }
        if (!std::isfinite(x)) {
            x = 0.0f;
            ++health_.sanitisedSamples;
        }
        out[n] = static_cast<float>(processSample(d, x));
    }
    applyPendingStep();
    for (std::size_t i = 0; i < taps_; ++i)
        weightsOut_[i] = static_cast<float>(w_[i]);
}

void FastRls::applyPendingStep()
{
    if (stepPending_)
        detail::fastRlsApplyStep(w_.data(), gain(), pendingStep_, taps_);
    stepPending_ = false;
}

double FastRls::processSample(double d, double x)
{
    const std::size_t N = taps_, R = N + 1;
    // The sample leaving the filter's window (x(n - N)) before the ring overwrites it.
    const double leaving = farEnd_[pos_ + N - 1];
    windowEnergy_ = std::max(0.0, windowEnergy_ + x * x - leaving * leaving);
    pos_ = (pos_ + R - 1) % R;
    farEnd_[pos_] = farEnd_[pos_ + R] = x;
    const double* u = &farEnd_[pos_];            // u[0] = x(n) .. u[N] = x(n - N)
    // Paused, the predictors go on (their regressor must shift with the far end) and the weights stay, so
    // the paused samples weigh in P as if the weights explained them: a prior towards the weights as
    // they are. Once the weights have learnt from more samples than a pause lasts, that prior is theirs
    // and right (after a far-end pause the filter goes on where it was: physical corpus, 4096 taps, mean
    // steady ERLE 29.2 dB, where restarting the predictors after every pause gave 25.2). Before, it pulls
    // them towards what they were at the start: the canceller's start, paused by its gate for a segment
    // at a time, took 3 s to 39 dB of reduction, against 1 s to 83 dB for dsp::Rls, whose P stands still
    // in a pause. So a pause longer than what the weights have learnt from restarts the predictors when
    // adaptation resumes.
    bool restart = false;
    const bool adapt = pauses_.adapts(adapting_, windowEnergy_ >= silenceEnergy_, restart);
    if (restart)
        restartPredictors();
    if (sinceStart_ < 2 * N)
        ++sinceStart_;
    else if (lambda_ != requestedLambda_)
        lambda_ = requestedLambda_;   // (setLambda says why not before)
    const double dither = detail::ftfDither(ditherState_, predictorDither);
    predictorFarEnd_[pos_] = predictorFarEnd_[pos_ + R] = x + dither;
    const double* v = &predictorFarEnd_[pos_];   // the predictors' view of the same

    // A-priori errors: forward and backward prediction, and the filter's (its output), with the last
    // sample's weight update made first in the same pass.
    double* const forwardNow = forward();
    double* const gainNow = gain();
    const detail::FastRlsDots dots = detail::fastRlsDots(forwardNow, backward_.data(), w_.data(), gainNow, pendingStep_,
                                                         stepPending_, v, u, N);
    stepPending_ = false;
    const double forwardDot = dots.forward, backwardDot = dots.backward, echo = dots.echo;
    const double e = d - echo;
    // What the weights learn from: until the predictors' view has filled, the error of that view (see
    // the header); from then on it differs from the far end by the dither only.
    double learnt = e;
    if (sinceStart_ <= N) {
        double echoSeen = 0.0;
        for (std::size_t i = 0; i < sinceStart_; ++i)
            echoSeen += w_[i] * v[i];
        learnt = d - echoSeen;
    }
    const double lambda = lambda_;

    // Forward step: the extended gain [c; gain - forward c] and the forward energy.
    const double forwardError = v[0] - forwardDot;
    const double c = forwardError / (lambda * forwardEnergy_);
    const double extendedLast = gainNow[N - 1] - forwardNow[N - 1] * c;
    const double extendedConversion = 1.0 / (1.0 / conversion_ + c * forwardError);
    forwardEnergy_ = 1.0 / (1.0 / (forwardEnergy_ * lambda) - extendedConversion * c * c);
    const double forwardPosterior = forwardError * conversion_;

    // Backward step, stabilised: the backward error directly and from the gain, mixed three ways.
    const double backwardFromGain = lambda * backwardEnergy_ * extendedLast;
    const double backwardDirect = v[N] - backwardDot;
    const double backward1 = 1.5 * backwardDirect - 0.5 * backwardFromGain;
    const double backward2 = 2.5 * backwardDirect - 1.5 * backwardFromGain;
    const double nextConversionInverse = 1.0 / extendedConversion - extendedLast * backwardDirect;
    const double backwardConversion = 1.0 / nextConversionInverse;
    backwardEnergy_ = lambda * backwardEnergy_ + backward2 * backward2 * backwardConversion;
    const double backwardStep = backward1 * backwardConversion;

    // The next gain, and both predictors updated (the forward one with the old gain).
    const int next = 1 - current_;
    const double gainDot = detail::fastRlsPredictorUpdate(gainNow, forwardNow, forwardStore_[next].data() + 1,
                                                          backward_.data(), gainStore_[next].data() + 1, v, c,
                                                          extendedLast, forwardPosterior, backwardStep, N);
    current_ = next;
    conversion_ = 1.0 / (1.0 + gainDot);

    const bool healthy = std::isfinite(conversion_) && conversion_ > 0.0 && conversion_ <= 1.0 + kConversionSlack && forwardEnergy_ > 0.0
                         && backwardEnergy_ > 0.0 && std::isfinite(forwardEnergy_) && std::isfinite(backwardEnergy_);
    conversion_ = std::min(conversion_, 1.0);
    if (!healthy) {
        restartPredictors();
        ++health_.reinitialisations;
        return e;
    }
    if (!adapt) {
        ++health_.pausedSamples;
        return e;
    }
    pauses_.adapted();
    pendingStep_ = learnt * conversion_;
    stepPending_ = true;
    return e;
}

} // namespace quell::dsp
