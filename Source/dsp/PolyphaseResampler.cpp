// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/PolyphaseResampler.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>

namespace quell::dsp {
namespace {

double besselI0(double x)
{
    // Power series; converges quickly for the beta range used by audio windows.
    double sum = 1.0, term = 1.0;
    const double q = x * x / 4.0;
    for (int k = 1; k < 200; ++k) {
        term *= q / (static_cast<double>(k) * k);
        sum += term;
        if (term < sum * 1e-17)
            break;
    }
    return sum;
}

} // namespace

std::vector<double> designResamplerPrototype(int up, int down, const ResamplerDesign& d)
{
    const int larger = std::max(up, down);
    const std::size_t half = static_cast<std::size_t>(d.zeroCrossings) * static_cast<std::size_t>(larger);
    const std::size_t length = 2 * half + 1;
    const double fc = d.rolloff * 0.5 / larger; // cycles per upsampled sample
    std::vector<double> h(length);
    const double i0Beta = besselI0(d.kaiserBeta);
    for (std::size_t k = 0; k < length; ++k) {
        const double t = static_cast<double>(k) - static_cast<double>(half);
        const double x = 2.0 * fc * t;
        const double sinc = (t == 0.0) ? 1.0 : std::sin(std::numbers::pi * x) / (std::numbers::pi * x);
        const double r = t / static_cast<double>(half);
        const double w = besselI0(d.kaiserBeta * std::sqrt(std::max(0.0, 1.0 - r * r))) / i0Beta;
        h[k] = static_cast<double>(up) * 2.0 * fc * sinc * w;
    }
    return h;
}

template <typename T>
void PolyphaseResampler<T>::prepare(int inputRate, int outputRate, const ResamplerDesign& design)
{
    if (inputRate <= 0 || outputRate <= 0)
        throw std::invalid_argument("resampler: sample rates must be positive (got " + std::to_string(inputRate)
                                    + " -> " + std::to_string(outputRate) + ")");
    const int g = std::gcd(inputRate, outputRate);
    up_ = outputRate / g;
    down_ = inputRate / g;
    if (up_ > 4096 || down_ > 4096)
        throw std::invalid_argument("resampler: rate ratio " + std::to_string(inputRate) + " -> "
                                    + std::to_string(outputRate) + " is too irregular (L or M above 4096)");
    const std::vector<double> h = designResamplerPrototype(up_, down_, design);
    centre_ = static_cast<double>(h.size() - 1) / 2.0;
    phaseLength_ = (h.size() + up_ - 1) / up_;
    phases_.assign(static_cast<std::size_t>(up_) * phaseLength_, T(0));
    // Phase p uses taps h[p + j*L] applied to x[base - j]; stored reversed so that the oldest sample in
    // the window meets the first stored tap.
    for (int p = 0; p < up_; ++p)
        for (std::size_t j = 0; j < phaseLength_; ++j) {
            const std::size_t k = static_cast<std::size_t>(p) + j * up_;
            if (k < h.size())
                phases_[static_cast<std::size_t>(p) * phaseLength_ + (phaseLength_ - 1 - j)] = T(h[k]);
        }
    line_.assign(2 * phaseLength_, T(0));
    reset();
}

template <typename T>
void PolyphaseResampler<T>::reset()
{
    std::fill(line_.begin(), line_.end(), T(0));
    pos_ = 0;
    inputCount_ = 0;
    nextOutputT_ = 0;
}

template <typename T>
std::size_t PolyphaseResampler<T>::process(std::span<const T> in, std::span<T> out)
{
    if (out.size() < maxOutput(in.size()))
        throw std::invalid_argument("resampler: output buffer too small");
    std::size_t written = 0;
    const std::size_t len = phaseLength_;
    for (const T x : in) {
        line_[pos_] = x;
        line_[pos_ + len] = x;
        const T* window = &line_[pos_ + 1]; // x[n-len+1] .. x[n]
        const std::uint64_t n = inputCount_;
        // Output t is due once its base input floor(t/L) has arrived.
        while (nextOutputT_ / static_cast<std::uint64_t>(up_) == n) {
            const std::size_t phase = static_cast<std::size_t>(nextOutputT_ % static_cast<std::uint64_t>(up_));
            const T* taps = &phases_[phase * len];
            T acc = T(0);
            for (std::size_t k = 0; k < len; ++k)
                acc += taps[k] * window[k];
            out[written++] = acc;
            nextOutputT_ += static_cast<std::uint64_t>(down_);
        }
        pos_ = (pos_ + 1 == len) ? 0 : pos_ + 1;
        ++inputCount_;
    }
    return written;
}

template <typename T>
std::vector<T> resampleWhole(std::span<const T> in, int inputRate, int outputRate)
{
    if (inputRate == outputRate)
        return std::vector<T>(in.begin(), in.end());
    PolyphaseResampler<T> resampler;
    resampler.prepare(inputRate, outputRate);
    std::vector<T> padded(in.begin(), in.end());
    padded.resize(in.size() + static_cast<std::size_t>(std::ceil(resampler.delayInInputSamples())) + 1, T(0));
    std::vector<T> out(resampler.maxOutput(padded.size()));
    out.resize(resampler.process(padded, out));
    const auto delay = static_cast<std::size_t>(std::lround(resampler.delayInOutputSamples()));
    out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(std::min(delay, out.size())));
    return out;
}

template class PolyphaseResampler<float>;
template class PolyphaseResampler<double>;
template std::vector<float> resampleWhole<float>(std::span<const float>, int, int);
template std::vector<double> resampleWhole<double>(std::span<const double>, int, int);

} // namespace quell::dsp
