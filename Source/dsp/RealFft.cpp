// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/RealFft.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace quell::dsp {

namespace {

std::size_t checkedHalf(std::size_t size)
{
    if (size < 2 || (size & (size - 1)) != 0)
        throw std::invalid_argument("real FFT size must be a power of two >= 2 (got " + std::to_string(size) + ")");
    return size / 2;
}

} // namespace

template <typename T>
RealFftPlan<T>::RealFftPlan(std::size_t size) : half_(checkedHalf(size))
{
    for (std::size_t k = 0; k <= size / 4; ++k) {
        const std::complex<double> w = std::polar(1.0, -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(size));
        twiddles_.emplace_back(static_cast<T>(w.real()), static_cast<T>(w.imag()));
    }
}

// With Z the half-size transform of z[n] = x[2n] + i x[2n+1], the even samples' spectrum is
// E_k = (Z_k + conj Z_{h-k}) / 2 and the odd samples' O_k = (Z_k - conj Z_{h-k}) / 2i, and
// X_k = E_k + W^k O_k, X_{h-k} = conj(E_k - W^k O_k) (W = exp(-2 pi i / size), h = size / 2).
template <typename T>
void RealFftPlan<T>::forward(std::span<const T> in, std::span<std::complex<T>> out) const
{
    const std::size_t h = half_.size();
    if (in.size() != 2 * h || out.size() != h + 1)
        throw std::invalid_argument("RealFftPlan::forward: " + std::to_string(in.size()) + " samples into "
                                    + std::to_string(out.size()) + " bins for a plan of " + std::to_string(2 * h));
    T* d = reinterpret_cast<T*>(out.data());
    std::copy(in.begin(), in.end(), d);
    half_.transformPairs(d, false);
    const T z0r = d[0], z0i = d[1];
    d[0] = z0r + z0i;
    d[1] = T(0);
    d[2 * h] = z0r - z0i;
    d[2 * h + 1] = T(0);
    for (std::size_t k = 1; 2 * k <= h; ++k) {
        const std::size_t j = h - k;
        const T ar = d[2 * k], ai = d[2 * k + 1], br = d[2 * j], bi = -d[2 * j + 1];   // Z_k, conj Z_{h-k}
        const T er = T(0.5) * (ar + br), ei = T(0.5) * (ai + bi);
        // O = (a - b) / 2i = (Im(a - b), -Re(a - b)) / 2
        const T orr = T(0.5) * (ai - bi), oi = T(-0.5) * (ar - br);
        const T wr = twiddles_[k].real(), wi = twiddles_[k].imag();
        const T tr = wr * orr - wi * oi, ti = wr * oi + wi * orr;   // W^k O
        d[2 * k] = er + tr;
        d[2 * k + 1] = ei + ti;
        if (j != k) {
            d[2 * j] = er - tr;
            d[2 * j + 1] = -(ei - ti);
        }
    }
}

// The forward's steps undone: Z_k = E_k + i O_k with 2 E_k = X_k + conj X_{h-k} and
// 2 W^k O_k = X_k - conj X_{h-k}; the factor 2 goes into the final 1/size.
template <typename T>
void RealFftPlan<T>::inverse(std::span<const std::complex<T>> in, std::span<T> out) const
{
    const std::size_t h = half_.size();
    if (in.size() != h + 1 || out.size() != 2 * h)
        throw std::invalid_argument("RealFftPlan::inverse: " + std::to_string(in.size()) + " bins into "
                                    + std::to_string(out.size()) + " samples for a plan of " + std::to_string(2 * h));
    T* d = out.data();
    {
        const T x0 = in[0].real(), xh = in[h].real();
        d[0] = x0 + xh;
        d[1] = x0 - xh;
    }
    for (std::size_t k = 1; 2 * k <= h; ++k) {
        const std::size_t j = h - k;
        const T ar = in[k].real(), ai = in[k].imag(), br = in[j].real(), bi = -in[j].imag();   // X_k, conj X_{h-k}
        const T er = ar + br, ei = ai + bi;   // 2 E_k
        const T sr = ar - br, si = ai - bi;   // 2 W^k O_k
        const T wr = twiddles_[k].real(), wi = -twiddles_[k].imag();
        const T orr = wr * sr - wi * si, oi = wr * si + wi * sr;   // 2 O_k
        // Z_k = E_k + i O_k; Z_{h-k} = conj E_k + i conj O_k
        d[2 * k] = er - oi;
        d[2 * k + 1] = ei + orr;
        if (j != k) {
            d[2 * j] = er + oi;
            d[2 * j + 1] = -ei + orr;
        }
    }
    half_.transformPairs(d, true);
    const T scale = T(1) / static_cast<T>(2 * h);
    for (std::size_t i = 0; i < 2 * h; ++i)
        d[i] *= scale;
}

template class RealFftPlan<float>;
template class RealFftPlan<double>;

} // namespace quell::dsp
