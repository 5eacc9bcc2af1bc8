// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/StereoFastRls.h"

#include "dsp/FastRlsKernels.h"
#include "dsp/FtfPauseRule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace quell::dsp {

namespace {
constexpr double kConversionSlack = 1e-3;   // as FastRls

// A symmetric 2 x 2 matrix stored [0][0], [0][1], [1][1].
bool positiveDefinite(const double* m)
{
    const double det = m[0] * m[2] - m[1] * m[1];
    return std::isfinite(m[0]) && std::isfinite(m[1]) && std::isfinite(m[2]) && m[0] > 0.0 && m[2] > 0.0 && det > 0.0;
}
} // namespace

void StereoFastRls::prepare(const RlsSettings& settings)
{
    validate(settings);
    if (settings.channels != 2)
        throw std::invalid_argument("stereo fast RLS takes two far-end channels (got " + std::to_string(settings.channels) + ")");
    if (settings.tapsPerChannel < 2)
        throw std::invalid_argument("stereo fast RLS needs at least 2 taps per channel (got "
                                    + std::to_string(settings.tapsPerChannel) + ")");
    settings_ = settings;
    taps_ = static_cast<std::size_t>(settings.tapsPerChannel);
    const std::size_t n = 2 * taps_;
    lambda_ = settings.lambda;
    silenceEnergy_ = settings.silenceFloor * double(n);
    farEnd_.assign(4 * (taps_ + 1), 0.0);
    predictorFarEnd_.assign(4 * (taps_ + 1), 0.0);
    for (int b = 0; b < 2; ++b) {
        for (int ch = 0; ch < 2; ++ch) {
            forwardStore_[b][ch].assign(n + 2, 0.0);
            forwardStore_[b][ch][static_cast<std::size_t>(ch)] = -1.0;
        }
        gainStore_[b].assign(n + 2, 0.0);
    }
    backward_[0].assign(n, 0.0);
    backward_[1].assign(n, 0.0);
    w_.assign(n, 0.0);
    weightsOut_.assign(n, 0.0f);
    reset();
}

void StereoFastRls::setRestartDelta(double delta)
{
    validateDelta(delta);
    epsilon_ = initialEnergyPerDelta * delta;
}

void StereoFastRls::reset()
{
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

void StereoFastRls::restartPredictors()
{
    ditherState_[0] = 1;
    ditherState_[1] = 2;
    std::fill(predictorFarEnd_.begin(), predictorFarEnd_.end(), 0.0);
    applyPendingStep();
    for (int b = 0; b < 2; ++b) {
        for (int ch = 0; ch < 2; ++ch)
            std::fill(forwardStore_[b][ch].begin() + 2, forwardStore_[b][ch].end(), 0.0);
        std::fill(gainStore_[b].begin() + 2, gainStore_[b].end(), 0.0);
    }
    std::fill(backward_[0].begin(), backward_[0].end(), 0.0);
    std::fill(backward_[1].begin(), backward_[1].end(), 0.0);
    const double backward = epsilon_ * std::pow(lambda_, -double(taps_));
    forwardEnergy_[0] = forwardEnergy_[2] = epsilon_;
    backwardEnergy_[0] = backwardEnergy_[2] = backward;
    forwardEnergy_[1] = backwardEnergy_[1] = 0.0;
    conversion_ = 1.0;
    pauses_.predictorsStarted();
    sinceStart_ = 0;
}

void StereoFastRls::processInterleaved(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
{
    if (ref.size() != 2 * mic.size() || out.size() < mic.size())
        throw std::invalid_argument("StereoFastRls::processInterleaved: ref must hold two channels of mic's length, out mic's");
    auto clean = [this](float v) {
        if (std::isfinite(v))
            return v;
        ++health_.sanitisedSamples;
        return 0.0f;
    };
    for (std::size_t n = 0; n < mic.size(); ++n) {
        const float d = clean(mic[n]), x0 = clean(ref[2 * n]), x1 = clean(ref[2 * n + 1]);
        out[n] = static_cast<float>(processSample(d, x0, x1));
    }
    applyPendingStep();
    for (std::size_t ch = 0; ch < 2; ++ch)
        for (std::size_t i = 0; i < taps_; ++i)
            weightsOut_[ch * taps_ + i] = static_cast<float>(w_[2 * i + ch]);
}

void StereoFastRls::applyPendingStep()
{
    if (stepPending_)
        detail::fastRlsApplyStep(w_.data(), gain(), pendingStep_, w_.size());
    stepPending_ = false;
}

double StereoFastRls::processSample(double d, double x0, double x1)
{
    const std::size_t N = taps_, R = N + 1, n = 2 * N;
    const double* leaving = &farEnd_[2 * (pos_ + N - 1)];
    windowEnergy_ = std::max(0.0, windowEnergy_ + x0 * x0 + x1 * x1 - leaving[0] * leaving[0] - leaving[1] * leaving[1]);
    pos_ = (pos_ + R - 1) % R;
    farEnd_[2 * pos_] = farEnd_[2 * (pos_ + R)] = x0;
    farEnd_[2 * pos_ + 1] = farEnd_[2 * (pos_ + R) + 1] = x1;
    const double* u = &farEnd_[2 * pos_];
    // Paused, the predictors go on and the weights stay; a pause longer than what the weights have learnt
    // from restarts the predictors when adaptation resumes (FastRls::processSample says why).
    bool restart = false;
    const bool adapt = pauses_.adapts(adapting_, windowEnergy_ >= silenceEnergy_, restart);
    if (restart)
        restartPredictors();
    const double v0 = x0 + detail::ftfDither(ditherState_[0], predictorDither), v1 = x1 + detail::ftfDither(ditherState_[1], predictorDither);
    predictorFarEnd_[2 * pos_] = predictorFarEnd_[2 * (pos_ + R)] = v0;
    predictorFarEnd_[2 * pos_ + 1] = predictorFarEnd_[2 * (pos_ + R) + 1] = v1;
    const double* v = &predictorFarEnd_[2 * pos_];

    double* const gainNow = gain();
    const double* const f0 = forward(0);
    const double* const f1 = forward(1);
    const detail::StereoFastRlsDots dots = detail::stereoFastRlsDots(f0, f1, backward_[0].data(), backward_[1].data(),
                                                                     w_.data(), gainNow, pendingStep_, stepPending_, v, u, n);
    stepPending_ = false;
    const double e = d - dots.echo;
    double learnt = e;
    if (sinceStart_ < N) {
        ++sinceStart_;
        double echoSeen = 0.0;
        for (std::size_t i = 0; i < 2 * sinceStart_; ++i)
            echoSeen += w_[i] * v[i];
        learnt = d - echoSeen;
    }
    const double lambda = lambda_;
    detail::StereoFastRlsStep step{};

    // Forward step: c = (lambda alpha)^-1 e_f, the extended conversion, alpha += gamma e_f e_f^T.
    const double ef0 = v[0] - dots.forward[0], ef1 = v[1] - dots.forward[1];
    const double m00 = lambda * forwardEnergy_[0], m01 = lambda * forwardEnergy_[1], m11 = lambda * forwardEnergy_[2];
    const double det = m00 * m11 - m01 * m01;
    step.c[0] = (m11 * ef0 - m01 * ef1) / det;
    step.c[1] = (m00 * ef1 - m01 * ef0) / det;
    const double extendedConversionInverse = 1.0 / conversion_ + ef0 * step.c[0] + ef1 * step.c[1];
    forwardEnergy_[0] = m00 + conversion_ * ef0 * ef0;
    forwardEnergy_[1] = m01 + conversion_ * ef0 * ef1;
    forwardEnergy_[2] = m11 + conversion_ * ef1 * ef1;
    step.forwardPosterior[0] = ef0 * conversion_;
    step.forwardPosterior[1] = ef1 * conversion_;
    for (std::size_t j = 0; j < 2; ++j)
        step.extendedLast[j] = gainNow[n - 2 + j] - f0[n - 2 + j] * step.c[0] - f1[n - 2 + j] * step.c[1];

    // Backward step, stabilised as FastRls's, component by component.
    const double* mu = step.extendedLast;
    const double* B = backwardEnergy_;
    const double fromGain[2] = {lambda * (B[0] * mu[0] + B[1] * mu[1]), lambda * (B[1] * mu[0] + B[2] * mu[1])};
    const double direct[2] = {v[n] - dots.backward[0], v[n + 1] - dots.backward[1]};
    double backward1[2], backward2[2];
    for (int j = 0; j < 2; ++j) {
        backward1[j] = 1.5 * direct[j] - 0.5 * fromGain[j];
        backward2[j] = 2.5 * direct[j] - 1.5 * fromGain[j];
    }
    const double backwardConversion = 1.0 / (extendedConversionInverse - (direct[0] * mu[0] + direct[1] * mu[1]));
    backwardEnergy_[0] = lambda * B[0] + backwardConversion * backward2[0] * backward2[0];
    backwardEnergy_[1] = lambda * B[1] + backwardConversion * backward2[0] * backward2[1];
    backwardEnergy_[2] = lambda * B[2] + backwardConversion * backward2[1] * backward2[1];
    step.backwardStep[0] = backward1[0] * backwardConversion;
    step.backwardStep[1] = backward1[1] * backwardConversion;

    const int next = 1 - current_;
    const double gainDot = detail::stereoFastRlsPredictorUpdate(
        gainNow, f0, f1, forwardStore_[next][0].data() + 2, forwardStore_[next][1].data() + 2, backward_[0].data(),
        backward_[1].data(), gainStore_[next].data() + 2, v, step, n);
    current_ = next;
    conversion_ = 1.0 / (1.0 + gainDot);

    const bool healthy = std::isfinite(conversion_) && conversion_ > 0.0 && conversion_ <= 1.0 + kConversionSlack
                         && positiveDefinite(forwardEnergy_) && positiveDefinite(backwardEnergy_);
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
