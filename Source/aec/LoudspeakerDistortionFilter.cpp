// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/LoudspeakerDistortionFilter.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {

namespace {

constexpr std::size_t K = LoudspeakerDistortionFilter::kTerms;

// Solves A a = b for a symmetric positive semi-definite A given by its lower triangle: scaled to unit
// diagonal (the terms' powers differ by orders of magnitude), `ridge` added to it, then Cholesky. False
// when a term has no energy or the system is not positive definite.
bool solveNormalEquations(const std::array<double, K * K>& lower, const std::array<double, K>& b, double ridge,
                          std::array<double, K>& a)
{
    std::array<double, K> scale{};
    for (std::size_t i = 0; i < K; ++i) {
        if (!(lower[i * K + i] > 0.0))
            return false;
        scale[i] = 1.0 / std::sqrt(lower[i * K + i]);
    }
    std::array<double, K * K> L{};
    for (std::size_t i = 0; i < K; ++i)
        for (std::size_t j = 0; j <= i; ++j) {
            double v = lower[i * K + j] * scale[i] * scale[j] + (i == j ? ridge : 0.0);
            for (std::size_t k = 0; k < j; ++k)
                v -= L[i * K + k] * L[j * K + k];
            if (i == j) {
                if (!(v > 0.0))
                    return false;
                L[i * K + i] = std::sqrt(v);
            } else {
                L[i * K + j] = v / L[j * K + j];
            }
        }
    std::array<double, K> y{};
    for (std::size_t i = 0; i < K; ++i) {
        double v = b[i] * scale[i];
        for (std::size_t k = 0; k < i; ++k)
            v -= L[i * K + k] * y[k];
        y[i] = v / L[i * K + i];
    }
    for (std::size_t i = K; i-- > 0;) {
        double v = y[i];
        for (std::size_t k = i + 1; k < K; ++k)
            v -= L[k * K + i] * a[k];
        a[i] = v / L[i * K + i];
    }
    for (std::size_t i = 0; i < K; ++i) {
        a[i] *= scale[i];
        if (!std::isfinite(a[i]))
            return false;
    }
    return true;
}

double symmetric(const std::array<double, K * K>& lower, std::size_t i, std::size_t j)
{
    return i >= j ? lower[i * K + j] : lower[j * K + i];
}

} // namespace

void LoudspeakerDistortionFilter::prepare(const DistortionFilterSettings& s, const dsp::ProcessSpec& spec)
{
    if (s.tapsPerChannel < 1 || spec.channels < 1 || s.segmentSamples < 1 || spec.sampleRate < 1 || !(s.memorySeconds > 0.0)
        || !(s.ridge >= 0.0) || !(s.minGainDb >= 0.0))
        throw std::invalid_argument("LoudspeakerDistortionFilter: bad settings");
    settings_ = s;
    spec_ = spec;
    const std::size_t line = 2 * static_cast<std::size_t>(s.tapsPerChannel) * static_cast<std::size_t>(spec.channels);
    for (auto& l : lines_)
        l.assign(line, 0.0f);
    for (auto& z : z_)
        z.assign(static_cast<std::size_t>(s.segmentSamples), 0.0f);
    nl_.assign(static_cast<std::size_t>(s.segmentSamples), 0.0f);
    decay_ = std::exp(-double(s.segmentSamples) / (s.memorySeconds * spec.sampleRate));
    reset();
}

void LoudspeakerDistortionFilter::reset()
{
    for (auto& l : lines_)
        std::fill(l.begin(), l.end(), 0.0f);
    pos_ = 0;
    r_.fill(0.0);
    segR_.fill(0.0);
    p_.fill(0.0);
    segP_.fill(0.0);
    ee_ = segEe_ = segFar_ = farPower_ = seen_ = 0.0;
    knee_.fill(0.0f);
    a_.fill(0.0);
    applied_.fill(0.0f);
    previous_.fill(0.0f);
    gainDb_ = 0.0;
    active_ = wasActive_ = false;
    needed_ = true;
    inSegment_ = 0;
}

void LoudspeakerDistortionFilter::push(std::span<const float> ref, std::size_t n)
{
    const std::size_t channels = static_cast<std::size_t>(spec_.channels);
    const std::size_t taps = static_cast<std::size_t>(settings_.tapsPerChannel);
    pos_ = pos_ == 0 ? taps - 1 : pos_ - 1;
    for (std::size_t c = 0; c < channels; ++c) {
        const float x = ref[n * channels + c];
        for (std::size_t j = 0; j < kClippers; ++j) {
            float* line = &lines_[j][c * 2 * taps];
            line[pos_] = line[pos_ + taps] = std::clamp(x, -knee_[j], knee_[j]) - x;
        }
        segFar_ += double(x) * x;
    }
}

void LoudspeakerDistortionFilter::skip(std::span<const float> ref)
{
    const std::size_t channels = static_cast<std::size_t>(spec_.channels);
    for (std::size_t n = 0; n * channels < ref.size(); ++n)
        push(ref, n);
    segFar_ = 0.0;
    inSegment_ = static_cast<int>((static_cast<std::size_t>(inSegment_) + ref.size() / channels) % static_cast<std::size_t>(settings_.segmentSamples));
}

void LoudspeakerDistortionFilter::estimate(std::span<const float> ref, std::span<const float> weights,
                                           std::span<float> distortion)
{
    const std::size_t channels = static_cast<std::size_t>(spec_.channels);
    const std::size_t taps = static_cast<std::size_t>(settings_.tapsPerChannel);
    const std::size_t n = distortion.size();
    if (ref.size() != n * channels || weights.size() != taps * channels
        || n > static_cast<std::size_t>(settings_.segmentSamples - inSegment_))
        throw std::invalid_argument("LoudspeakerDistortionFilter::estimate: lengths differ");
    const std::size_t first = static_cast<std::size_t>(inSegment_);
    if (!needed_) {
        // Neither learning nor fitted: the far end's history only (no dot products).
        for (std::size_t i = 0; i < n; ++i)
            push(ref, i);
        std::fill(distortion.begin(), distortion.end(), 0.0f);
        std::fill_n(nl_.begin() + static_cast<std::ptrdiff_t>(first), n, 0.0f);
        return;
    }
    const float fade = 1.0f / float(settings_.segmentSamples);
    for (std::size_t i = 0; i < n; ++i) {
        push(ref, i);
        // Four partial sums per regressor: independent chains the processor can overlap.
        float acc[kClippers][4] = {};
        for (std::size_t c = 0; c < channels; ++c) {
            const float* w = &weights[c * taps];
            const float* u0 = &lines_[0][c * 2 * taps + pos_];
            const float* u1 = &lines_[1][c * 2 * taps + pos_];
            const float* u2 = &lines_[2][c * 2 * taps + pos_];
            std::size_t k = 0;
            for (; k + 4 <= taps; k += 4)
                for (std::size_t j = 0; j < 4; ++j) {
                    acc[0][j] += w[k + j] * u0[k + j];
                    acc[1][j] += w[k + j] * u1[k + j];
                    acc[2][j] += w[k + j] * u2[k + j];
                }
            for (; k < taps; ++k) {
                acc[0][0] += w[k] * u0[k];
                acc[1][0] += w[k] * u1[k];
                acc[2][0] += w[k] * u2[k];
            }
        }
        const std::size_t at = first + i;
        // From the previous segment's coefficients to this one's over the segment.
        const float t = float(at + 1) * fade;
        float nl = 0.0f;
        for (std::size_t j = 0; j < kClippers; ++j) {
            z_[j][at] = (acc[j][0] + acc[j][1]) + (acc[j][2] + acc[j][3]);
            nl += (previous_[j] + t * (applied_[j] - previous_[j])) * z_[j][at];
        }
        distortion[i] = nl_[at] = nl;
    }
}

void LoudspeakerDistortionFilter::observe(std::span<const float> mic, std::span<const float> out)
{
    const std::size_t n = mic.size();
    if (out.size() != n || n > static_cast<std::size_t>(settings_.segmentSamples - inSegment_))
        throw std::invalid_argument("LoudspeakerDistortionFilter::observe: lengths differ");
    for (std::size_t i = 0; i < n && needed_; ++i) {
        const std::size_t at = static_cast<std::size_t>(inSegment_) + i;
        // The linear filter's own residual, with the distortion estimate put back, against its echo
        // estimate and the clippers' regressors.
        const double e = double(out[i]) + nl_[at];
        const double z[K] = {double(mic[i]) - nl_[at] - out[i], z_[0][at], z_[1][at], z_[2][at]};
        for (std::size_t a = 0; a < K; ++a) {
            segP_[a] += z[a] * e;
            for (std::size_t b = 0; b <= a; ++b)
                segR_[a * K + b] += z[a] * z[b];
        }
        segEe_ += e * e;
    }
    inSegment_ = static_cast<int>((static_cast<std::size_t>(inSegment_) + n) % static_cast<std::size_t>(settings_.segmentSamples));
}

void LoudspeakerDistortionFilter::segmentEnd(bool learn, bool learnNext)
{
    if (learn && segFar_ > 0.0) {
        for (std::size_t i = 0; i < K * K; ++i)
            r_[i] = decay_ * r_[i] + segR_[i];
        for (std::size_t i = 0; i < K; ++i)
            p_[i] = decay_ * p_[i] + segP_[i];
        ee_ = decay_ * ee_ + segEe_;
        seen_ += settings_.segmentSamples;
        const double power = segFar_ / (double(settings_.segmentSamples) * spec_.channels);
        farPower_ = farPower_ > 0.0 ? decay_ * farPower_ + (1.0 - decay_) * power : power;
        // The knees follow the far end's level slowly (the fit's memory): the same clippers describe the
        // loudspeaker whatever the far end's level.
        const float rms = float(std::sqrt(farPower_));
        for (std::size_t j = 0; j < kClippers; ++j)
            knee_[j] = kKnees[j] * rms;
    }
    segR_.fill(0.0);
    segP_.fill(0.0);
    segEe_ = segFar_ = 0.0;

    std::array<double, K> a{};
    const bool solved = ee_ > 0.0 && seen_ >= spec_.sampleRate && solveNormalEquations(r_, p_, settings_.ridge, a);
    gainDb_ = 0.0;
    if (solved) {
        double residual = ee_;
        for (std::size_t i = 0; i < K; ++i) {
            residual -= 2.0 * a[i] * p_[i];
            for (std::size_t j = 0; j < K; ++j)
                residual += a[i] * a[j] * symmetric(r_, i, j);
        }
        // Against the linear estimate's term alone: what the clippers add.
        const double linearOnly = ee_ - p_[0] * p_[0] / r_[0];
        gainDb_ = residual > 0.0 && linearOnly > 0.0 ? std::max(0.0, 10.0 * std::log10(linearOnly / residual)) : 0.0;
    }
    wasActive_ = active_;
    active_ = solved && gainDb_ >= settings_.minGainDb;
    a_ = active_ ? a : std::array<double, K>{};
    previous_ = applied_;
    for (std::size_t j = 0; j < kClippers; ++j)
        applied_[j] = float(a_[j + 1]);
    needed_ = learnNext || active_ || wasActive_;
}

} // namespace quell::aec
