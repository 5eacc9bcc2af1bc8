// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Linear convolution for the corpus generator: long test signals (tens of seconds) with room impulse
// responses of up to a second. Direct convolution of those costs billions of multiply-adds per file, so
// long cases go through a plain radix-2 FFT of our own (float64; no FFT library is a dependency of the
// project). Short cases stay direct, which is exact and faster there.
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

namespace quell::corpus {

// In-place iterative radix-2 FFT; a.size() must be a power of two. The inverse is scaled by 1/N.
void fft(std::vector<std::complex<double>>& a, bool inverse);

std::size_t nextPowerOfTwo(std::size_t n);

// Full linear convolution: x.size() + h.size() - 1 samples (empty if either input is empty).
std::vector<double> convolveFull(std::span<const double> x, std::span<const double> h);

// The first x.size() samples of the full convolution: the causal output of the filter h driven by x.
std::vector<double> convolveCausal(std::span<const double> x, std::span<const double> h);

} // namespace quell::corpus
