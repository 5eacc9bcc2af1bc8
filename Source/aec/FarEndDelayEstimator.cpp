// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FarEndDelayEstimator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dsp/TargetClones.h"

namespace quell::aec {

namespace {

// corr[k] = a corr[k] + bm x[k] for every lag: the estimator's whole cost (4000 lags at 4 kHz for a 1 s
// reach, a multiply-add per lag per decimated sample), and each lag independent, so the AVX2 clone gives
// the baseline's bits (no FMA: TargetClones.h). A server's many calls each run one (MultiStreamCanceller):
// it was a quarter of a stream's CPU time there. In float, eight lags a vector: a decay of 1 - 1e-4 and
// steps of 1e-4 of the average are far inside float's 6e-8.
QUELL_CLONES void decayLagProducts(float* corr, const float* x, int lags, float a, float bm)
{
    for (int k = 0; k < lags; ++k)
        corr[k] = a * corr[k] + bm * x[k];
}

} // namespace

void FarEndDelayEstimator::prepare(const DelayEstimatorSettings& s, const dsp::ProcessSpec& spec)
{
    if (spec.sampleRate < 8000 || s.maxDelaySeconds <= 0.0 || s.maxDelaySeconds > 4.0 || s.memorySeconds <= 0.0
        || s.holdSeconds < 0.0 || s.warmupSeconds < 0.0)
        throw std::invalid_argument("FarEndDelayEstimator: bad settings");
    settings_ = s;
    factor_ = std::max(1, static_cast<int>(std::lround(spec.sampleRate / 4000.0)));
    const double rate = static_cast<double>(spec.sampleRate) / factor_;
    lags_ = static_cast<int>(std::ceil(s.maxDelaySeconds * rate)) + 1;
    alpha_ = std::exp(-1.0 / (s.memorySeconds * rate));
    shortAlpha_ = std::exp(-1.0 / (0.03 * rate));
    warmupSamples_ = static_cast<long>(s.warmupSeconds * rate);
    checkEvery_ = std::max(1, static_cast<int>(0.016 * rate));
    holdChecks_ = std::max(1, static_cast<int>(std::lround(s.holdSeconds * rate / checkEvery_)));
    refLine_.assign(2 * static_cast<std::size_t>(lags_), 0.0f);
    corr_.assign(static_cast<std::size_t>(lags_), 0.0f);
    reset();
}

void FarEndDelayEstimator::reset()
{
    std::fill(refLine_.begin(), refLine_.end(), 0.0f);
    std::fill(corr_.begin(), corr_.end(), 0.0f);
    pos_ = 0;
    filled_ = 0;
    micAcc_ = refAcc_ = 0.0;
    inBlock_ = 0;
    prevMic_ = prevRef_ = 0.0f;
    micPower_ = refPower_ = refShort_ = 0.0;
    sinceCheck_ = 0;
    activeSamples_ = 0;
    candidate_ = -1;
    candidateChecks_ = 0;
    reported_ = 0;
    found_ = false;
    confidence_ = 0.0;
}

void FarEndDelayEstimator::process(std::span<const float> mic, std::span<const float> ref)
{
    if (mic.size() != ref.size())
        throw std::invalid_argument("FarEndDelayEstimator::process: mic and ref lengths differ");
    for (std::size_t n = 0; n < mic.size(); ++n) {
        micAcc_ += mic[n];
        refAcc_ += ref[n];
        if (++inBlock_ == factor_) {
            addDecimated(static_cast<float>(micAcc_ / factor_), static_cast<float>(refAcc_ / factor_));
            micAcc_ = refAcc_ = 0.0;
            inBlock_ = 0;
        }
    }
}

void FarEndDelayEstimator::addDecimated(float mRaw, float rRaw)
{
    const float m = mRaw - prevMic_, r = rRaw - prevRef_;
    prevMic_ = mRaw;
    prevRef_ = rRaw;
    // Newest far-end sample at pos_ (and its mirror): refLine_[pos_ + k] is the sample k steps back.
    pos_ = pos_ == 0 ? static_cast<std::size_t>(lags_) - 1 : pos_ - 1;
    refLine_[pos_] = r;
    refLine_[pos_ + lags_] = r;
    filled_ = std::min(filled_ + 1, lags_);
    refShort_ = shortAlpha_ * refShort_ + (1.0 - shortAlpha_) * double(rRaw) * rRaw;
    // Averaging only while the far end plays: the window of the longest lag is what matters, but the
    // short-term power of the present is a good enough gate (the decision is only slower to resume).
    if (refShort_ < settings_.silenceFloor)
        return;
    const float* x = &refLine_[pos_];
    const double a = alpha_, b = 1.0 - alpha_;
    decayLagProducts(corr_.data(), x, lags_, static_cast<float>(a), static_cast<float>(b * double(m)));
    micPower_ = a * micPower_ + b * double(m) * m;
    refPower_ = a * refPower_ + b * double(r) * r;
    ++activeSamples_;
    if (++sinceCheck_ >= checkEvery_) {
        sinceCheck_ = 0;
        pickPeak();
    }
}

void FarEndDelayEstimator::pickPeak()
{
    // Lags longer than the far end heard so far have correlated with nothing: counting their zeros in
    // the RMS would make any early peak look prominent.
    int best = 0;
    double bestAbs = 0.0, sumSq = 0.0;
    for (int k = 0; k < filled_; ++k) {
        const double c = corr_[k];
        sumSq += c * c;
        if (std::abs(c) > bestAbs) {
            bestAbs = std::abs(c);
            best = k;
        }
    }
    prominence_ = sumSq > 0.0 ? bestAbs / std::sqrt(sumSq / filled_) : 0.0;
    // Until the averages hold about one memory of far-end signal, any lag correlates well: wait.
    if (activeSamples_ < warmupSamples_)
        return;
    const double norm = std::sqrt(micPower_ * refPower_);
    const double conf = norm > 0.0 ? bestAbs / norm : 0.0;
    if (conf < settings_.minConfidence || prominence_ < settings_.minProminence) {
        candidateChecks_ = 0;
        return;
    }
    if (candidate_ >= 0 && std::abs(best - candidate_) <= 1)
        ++candidateChecks_;
    else {
        candidate_ = best;
        candidateChecks_ = 1;
    }
    if (candidateChecks_ >= holdChecks_) {
        // A new lag has to beat the one in use (no delay before the first estimate) clearly: speech's
        // pitch and strong early reflections make side peaks that lead for a moment.
        if (std::abs(best - reported_) > 1) {
            double current = 0.0;
            for (int k = std::max(0, reported_ - 1); k <= std::min(lags_ - 1, reported_ + 1); ++k)
                current = std::max(current, std::abs(static_cast<double>(corr_[k])));
            if (bestAbs >= settings_.switchRatio * current)
                reported_ = best;
        }
        found_ = true;
        confidence_ = conf;
    }
}

} // namespace quell::aec
