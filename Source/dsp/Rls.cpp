#include "dsp/Rls.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dsp/RlsRowKernels.h"

namespace quell::dsp {

void validate(const RlsSettings& s)
{
    if (s.taps < 1 || s.taps > 16384)
        throw std::invalid_argument("taps must be between 1 and 16384 (got " + std::to_string(s.taps) + ")");
    if (!(s.lambda > 0.0 && s.lambda <= 1.0) || !(s.lambda >= 0.9))
        throw std::invalid_argument("lambda must lie in [0.9, 1] (got " + std::to_string(s.lambda) + ")");
    if (!(s.delta > 0.0) || !std::isfinite(s.delta))
        throw std::invalid_argument("delta must be positive (got " + std::to_string(s.delta) + ")");
    if (!(s.silenceFloor >= 0.0))
        throw std::invalid_argument("silenceFloor must be non-negative");
}

template <typename T>
void Rls<T>::prepare(const RlsSettings& settings)
{
    validate(settings);
    settings_ = settings;
    taps_ = settings.taps;
    stride_ = (static_cast<std::size_t>(taps_) + 15) / 16 * 16;
    lambda_ = T(settings.lambda);
    invLambda_ = T(1.0 / settings.lambda);
    p_.resize(stride_ * stride_);
    w_.resize(stride_);
    u_.resize(stride_);
    vA_.resize(stride_);
    vB_.resize(stride_);
    reset();
}

template <typename T>
void Rls<T>::reinitialiseP()
{
    p_.zero();
    const T diag = T(1.0 / settings_.delta);
    for (int i = 0; i < taps_; ++i)
        p_[static_cast<std::size_t>(i) * stride_ + i] = diag;
    pending_ = false;
}

template <typename T>
void Rls<T>::reset()
{
    reinitialiseP();
    w_.zero();
    u_.zero();
    vA_.zero();
    vB_.zero();
    v_ = vA_.data();
    vNext_ = vB_.data();
    uEnergy_ = 0.0;
    sinceResum_ = 0;
    health_ = {};
}

template <typename T>
T Rls<T>::processSample(T d, T x)
{
    if (!std::isfinite(d) || !std::isfinite(x)) {
        ++health_.sanitisedSamples;
        if (!std::isfinite(d)) d = T(0);
        if (!std::isfinite(x)) x = T(0);
    }
    const std::size_t n = static_cast<std::size_t>(taps_);
    const T leaving = u_[n - 1];
    std::copy_backward(u_.data(), u_.data() + n - 1, u_.data() + n);
    u_[0] = x;
    uEnergy_ += static_cast<double>(x) * x - static_cast<double>(leaving) * leaving;
    if (++sinceResum_ >= 4096) { // bound the drift of the running sum
        uEnergy_ = 0.0;
        for (std::size_t i = 0; i < n; ++i)
            uEnergy_ += static_cast<double>(u_[i]) * u_[i];
        sinceResum_ = 0;
    }

    // Fused pass: the deferred update of P (sample n-1) and v(n) = P(n-1) u(n), one row at a time.
    T* p = p_.data();
    if (pending_) {
        for (std::size_t i = 0; i < n; ++i, p += stride_)
            vNext_[i] = detail::rowUpdateDot(p, v_, v_[i], pendingR_, invLambda_, u_.data(), stride_);
        pending_ = false;
    } else {
        for (std::size_t i = 0; i < n; ++i, p += stride_)
            vNext_[i] = detail::dot(p, u_.data(), stride_);
    }
    std::swap(v_, vNext_);

    const T e = d - detail::dot(w_.data(), u_.data(), stride_);
    if (uEnergy_ <= settings_.silenceFloor * static_cast<double>(n)) {
        ++health_.pausedSamples;
        return e;
    }
    const T alpha = lambda_ + detail::dot(u_.data(), v_, stride_);
    if (!(alpha >= T(0.5) * lambda_) || !std::isfinite(alpha) || !std::isfinite(e)) {
        ++health_.reinitialisations;
        reinitialiseP();
        if (!std::isfinite(e))
            w_.zero();
        return std::isfinite(e) ? e : d;
    }
    const T r = T(1) / alpha;
    const T g = e * r;
    for (std::size_t i = 0; i < n; ++i)
        w_[i] += g * v_[i];
    pending_ = true;
    pendingR_ = r;
    return e;
}

template <typename T>
void Rls<T>::process(std::span<const T> mic, std::span<const T> ref, std::span<T> out)
{
    if (mic.size() != ref.size() || out.size() < mic.size())
        throw std::invalid_argument("Rls::process: mic, ref and out must have the same length");
    for (std::size_t i = 0; i < mic.size(); ++i)
        out[i] = processSample(mic[i], ref[i]);
}

template class Rls<float>;
template class Rls<double>;

} // namespace quell::dsp
