// SPDX-License-Identifier: GPL-3.0-or-later
#include "corpus/FftConvolution.h"

#include "dsp/Fft.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

namespace quell::corpus {

std::size_t nextPowerOfTwo(std::size_t n)
{
    std::size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

void fft(std::vector<std::complex<double>>& a, bool inverse)
{
    dsp::FftPlan<double>(a.size()).transform(a, inverse);
}

std::vector<double> convolveFull(std::span<const double> x, std::span<const double> h)
{
    if (x.empty() || h.empty())
        return {};
    const std::size_t outLength = x.size() + h.size() - 1;
    std::vector<double> y(outLength, 0.0);
    // Below about a million multiply-adds the direct sum is both exact and quicker than three FFTs.
    if (x.size() * h.size() <= (1u << 20)) {
        for (std::size_t i = 0; i < x.size(); ++i)
            for (std::size_t k = 0; k < h.size(); ++k)
                y[i + k] += x[i] * h[k];
        return y;
    }
    // Both real inputs packed into one complex transform: X + iH, separated by conjugate symmetry.
    const std::size_t n = nextPowerOfTwo(outLength);
    std::vector<std::complex<double>> z(n);
    for (std::size_t i = 0; i < x.size(); ++i)
        z[i].real(x[i]);
    for (std::size_t i = 0; i < h.size(); ++i)
        z[i].imag(h[i]);
    fft(z, false);
    std::vector<std::complex<double>> product(n);
    for (std::size_t k = 0; k < n; ++k) {
        const std::complex<double> a = z[k];
        const std::complex<double> b = std::conj(z[(n - k) & (n - 1)]);
        const std::complex<double> xk = 0.5 * (a + b);
        const std::complex<double> hk = std::complex<double>(0.0, -0.5) * (a - b);
        product[k] = xk * hk;
    }
    fft(product, true);
    for (std::size_t i = 0; i < outLength; ++i)
        y[i] = product[i].real();
    return y;
}

std::vector<double> convolveCausal(std::span<const double> x, std::span<const double> h)
{
    std::vector<double> y = convolveFull(x, h);
    y.resize(x.size(), 0.0);
    return y;
}

} // namespace quell::corpus
