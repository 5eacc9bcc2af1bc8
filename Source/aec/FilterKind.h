// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Which adaptive filter the echo canceller runs (the backend says where).
//  - Rls: exact least squares per sample: on the GPU O(N^2) per sample spread over the multiprocessors;
//    on the CPU for one far-end channel the fast RLS (dsp::FastRls), O(N) per sample, and for several
//    O(N^2) per sample where that fits.
//  - Kalman: the partitioned-block frequency-domain Kalman filter (dsp::Pbfdkf), O(log B) per tap and
//    sample: the CPU's filter for a stereo far end's long tails in real time.
//  - Nlms: normalised LMS, O(1) per tap and sample, one far-end channel, on the CPU: the cheapest and
//    slowest to converge; Auto picks it only where neither of the others fits the real-time budget, and
//    naming it is for comparison (quell-eval's CPU quality table) and the weakest machines.
//  - Auto: RLS on the GPU; on the CPU with the length automatic, RLS at 256 ms for one far-end channel
//    and the Kalman filter at 256 ms for several (FilterPlan.cpp's kalmanOutright has the measurements);
//    at a length asked for, RLS where it fits the real-time budget (offline: always), the Kalman filter
//    otherwise (see EchoCanceller::prepare, which says what it chose).
#include <string_view>

namespace quell::aec {

enum class FilterKind { Auto, Rls, Kalman, Nlms };

// Whether the filter runs on the CPU only (the GPU runs RLS).
constexpr bool cpuOnly(FilterKind kind) { return kind == FilterKind::Kalman || kind == FilterKind::Nlms; }

// The filter named by `text` ("rls", "kalman", "nlms" or "auto"); otherwise std::invalid_argument naming `option`
// (where the name came from) and the choices.
FilterKind parseFilterKind(std::string_view option, std::string_view text);
const char* toString(FilterKind kind);

} // namespace quell::aec
