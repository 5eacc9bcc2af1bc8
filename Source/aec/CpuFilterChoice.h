#pragma once
// Which adaptive filter the CPU can afford in real time. RLS costs O(N^2) per sample and is memory-bound
// for long filters (1024 taps at 16 kHz moves ~130 GB/s through P), far beyond a laptop core; NLMS costs
// O(N). The choice is made by measuring, at prepare, the RLS cost per sample on this machine:
//  - RLS at the configured length if it fits the budget (with 20 % headroom for the rest of the pipeline);
//  - else RLS at the longest halved length that fits, if that keeps at least half the configured length
//    (half the tail is still most of the echo energy);
//  - else NLMS at the full configured length (slower to converge, but it covers the whole tail).
#include <memory>
#include <string>

#include "aec/LinearEchoFilter.h"

namespace quell::aec {

struct CpuFilterChoice {
    std::unique_ptr<LinearEchoFilter> filter;
    std::string mode;   // shown to the user, e.g. "CPU NLMS, 1024 taps (RLS at 1024 taps needs 5.1x real time here)"
};

// budget: the fraction of one core the filter may use at `sampleRate` (e.g. 0.5).
CpuFilterChoice chooseRealtimeCpuFilter(const dsp::RlsSettings& settings, int sampleRate, double budget);

// Measured seconds of CPU per sample for float32 RLS of `taps` (a short timed run on noise).
double measureRlsSecondsPerSample(int taps);

std::unique_ptr<LinearEchoFilter> makeCpuNlmsFilter(int taps);

} // namespace quell::aec
