// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Which adaptive filter the CPU runs in real time. RLS for one far-end channel is the fast RLS
// (dsp::FastRls, O(N) per sample: 4096 taps at 16 kHz take about a tenth of a core here), for two the
// two-channel fast RLS (dsp::StereoFastRls: 2 x 4096 taps about 0.2 of a core); for more it costs
// O(N^2) per sample and is memory-bound for long filters (1024 taps at 16 kHz moves ~130 GB/s through P),
// far beyond a laptop core; the frequency-domain Kalman filter (dsp::Pbfdkf) costs O(log B) per tap and
// sample; NLMS costs O(N) and converges slowly. The choice, by measuring at prepare:
//  - RLS at the configured length if it fits the budget (with 20 % headroom for the rest of the pipeline);
//  - else the Kalman filter at the configured length;
//  - NLMS only if the Kalman filter does not fit either.
// Each cost is the fastest of several short timed runs: the minimum is what the machine can do, and it
// repeats from run to run where a single timing (or a mean) carries the scheduler's noise. It is measured
// once per process for each filter shape and kept: every plan in a process (a host that prepares a plugin
// again, several cancellers, the budget tests) compares the same costs, where measuring again took
// another sample of the noise (on the 2-core development machine the three stereo filters usually
// measure 0.37 of a core; the filter-plan test measured 0.59 and 0.64 in two runs, and its budgets between
// costs then fell on the other side of the plan's own measurement).
#include <memory>
#include <string>

#include "aec/FilterPlan.h"

namespace quell::aec {

struct CpuFilterChoice {
    FilterEngine engine = FilterEngine::CpuRls;   // CpuRls, CpuKalman or CpuNlms
    std::string why;   // shown after the filter's description, e.g. " (0.12 of a core)"
};

// The timed runs have the caches to themselves; in the audio pipeline the other stages share them and
// the scheduler adds its jitter: a filter is taken in real time only if it fits this much of the budget.
inline constexpr double kRealtimeHeadroom = 0.8;

// budget: the fraction of one core the filter may use at `sampleRate` (e.g. 0.5). `kalman` describes the
// same filter length and channels as `rls` (taps per channel there).
CpuFilterChoice chooseRealtimeCpuFilter(const dsp::RlsSettings& rls, const dsp::PbfdkfSettings& kalman, int sampleRate,
                                        double budget);

// Measured seconds of CPU per sample (the fastest of a few short timed runs on noise), measured at the
// first call for each shape (taps and channels; the Kalman filter's block too) and the same value after.
// Thread-safe: a measurement holds the others back, so that two do not share the cores.
double measureRlsSecondsPerSample(int tapsPerChannel, int channels = 1);
double measureKalmanSecondsPerSample(const dsp::PbfdkfSettings& settings);

} // namespace quell::aec
