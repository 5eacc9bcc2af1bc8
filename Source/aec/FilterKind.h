// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Which adaptive filter the echo canceller runs (the backend says where).
//  - Rls: exact least squares per sample; O(N^2) per sample: the GPU's filter, and the CPU's where it fits.
//  - Kalman: the partitioned-block frequency-domain Kalman filter (dsp::Pbfdkf), O(log B) per tap and
//    sample: the CPU's filter for long tails in real time.
//  - Auto: RLS on the GPU; on the CPU RLS where it fits the real-time budget, the Kalman filter otherwise
//    (see EchoCanceller::prepare, which says what it chose).
#include <string_view>

namespace quell::aec {

enum class FilterKind { Auto, Rls, Kalman };

// The filter named by `text` ("rls", "kalman" or "auto"); otherwise std::invalid_argument naming `option`
// (where the name came from) and the choices.
FilterKind parseFilterKind(std::string_view option, std::string_view text);
const char* toString(FilterKind kind);

} // namespace quell::aec
