// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The dot products of the canceller's time-domain filters (the two-path foreground and its candidate,
// one per sample over every tap): sixteen partial sums and one fixed tree to add them, so the AVX2 clone
// and the baseline one give the same bits (dsp/TargetClones.h).
#include <cstddef>

namespace quell::dsp {

float floatDot(const float* w, const float* u, std::size_t n);

// a . u and b . u in one pass over u (a foreground and the candidate it is probing, on one regressor).
struct FloatDotPair {
    float a = 0.0f, b = 0.0f;
};
FloatDotPair floatDotPair(const float* a, const float* b, const float* u, std::size_t n);

} // namespace quell::dsp
