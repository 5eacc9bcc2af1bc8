// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Measurements on an impulse response: Schroeder's backward-integrated energy decay curve, the
// reverberation time fitted on it (T20, T30 as in ISO 3382), and how much energy lies beyond a given
// time (what an adaptive filter of that length cannot model).
#include <cstddef>
#include <span>
#include <vector>

namespace quell::corpus {

// Energy decay curve in dB, 0 dB at sample 0: EDC[n] = 10 log10( sum_{k>=n} h[k]^2 / sum_k h[k]^2 ).
std::vector<double> schroederDecayDb(std::span<const double> h);

// Reverberation time from a least-squares line through the EDC between `fromDb` and `toDb` (both
// negative, fromDb > toDb), extrapolated to -60 dB. T20: (-5, -25); T30: (-5, -35).
// Throws std::runtime_error when the EDC does not reach `toDb` (response too short or too quiet).
double decayTime(std::span<const double> h, double sampleRate, double fromDb, double toDb);
inline double t20(std::span<const double> h, double sampleRate) { return decayTime(h, sampleRate, -5.0, -25.0); }
inline double t30(std::span<const double> h, double sampleRate) { return decayTime(h, sampleRate, -5.0, -35.0); }

// 10 log10 of the energy from sample `from` on over the total energy (negative; -inf if none).
double tailEnergyDb(std::span<const double> h, std::size_t from);

// Index of the largest |h[n]| (the direct path in a room response).
std::size_t peakIndex(std::span<const double> h);

} // namespace quell::corpus
