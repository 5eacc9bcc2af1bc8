// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/Nlms.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dsp/RlsRowKernels.h"

namespace quell::dsp {

template <typename T>
void Nlms<T>::prepare(const NlmsSettings& settings)
{
    if (settings.taps < 1 || settings.taps > 65536)
        throw std::invalid_argument("NLMS taps must be between 1 and 65536 (got " + std::to_string(settings.taps) + ")");
    if (!(settings.stepSize > 0.0 && settings.stepSize < 2.0))
        throw std::invalid_argument("NLMS step size must lie in (0, 2)");
    settings_ = settings;
    stride_ = (static_cast<std::size_t>(settings.taps) + 15) / 16 * 16;
    w_.resize(stride_);
    u_.resize(stride_);
    reset();
}

template <typename T>
void Nlms<T>::reset()
{
    w_.zero();
    u_.zero();
    uEnergy_ = 0.0;
    sinceResum_ = 0;
}

template <typename T>
void Nlms<T>::process(std::span<const T> mic, std::span<const T> ref, std::span<T> out)
{
    if (mic.size() != ref.size() || out.size() < mic.size())
        throw std::invalid_argument("Nlms::process: mic, ref and out must have the same length");
    const std::size_t n = static_cast<std::size_t>(settings_.taps);
    for (std::size_t s = 0; s < mic.size(); ++s) {
        T x = std::isfinite(ref[s]) ? ref[s] : T(0);
        T d = std::isfinite(mic[s]) ? mic[s] : T(0);
        const T leaving = u_[n - 1];
        std::copy_backward(u_.data(), u_.data() + n - 1, u_.data() + n);
        u_[0] = x;
        uEnergy_ += static_cast<double>(x) * x - static_cast<double>(leaving) * leaving;
        if (++sinceResum_ >= 4096) {
            uEnergy_ = 0.0;
            for (std::size_t i = 0; i < n; ++i)
                uEnergy_ += static_cast<double>(u_[i]) * u_[i];
            sinceResum_ = 0;
        }
        const T e = d - detail::dot(w_.data(), u_.data(), stride_);
        out[s] = e;
        if (!adapting_)
            continue;
        const T g = T(settings_.stepSize / (std::max(uEnergy_, 0.0) + settings_.epsilon)) * e;
        for (std::size_t i = 0; i < n; ++i)
            w_[i] += g * u_[i];
    }
}

template class Nlms<float>;
template class Nlms<double>;

} // namespace quell::dsp
