// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Settings and health counters of the RLS filter, shared by the CPU Rls (dsp/Rls.h) and the GPU one
// (Kernels/rls/GpuRls.h). Kept apart from Rls.h because the CUDA sources are compiled as C++17 and
// Rls.h uses std::span.
#include <cstdint>

namespace quell::dsp {

struct RlsSettings {
    int tapsPerChannel = 1024;    // the filter length per far-end channel
    double lambda = 0.9999;
    double delta = 1e-2;          // P(0) = I / delta
    double silenceFloor = 1e-10;  // mean far-end power per tap (about -100 dBFS) below which adaptation pauses
    // Far-end channels in the regressor (a stereo far end: 2). u(n) holds tapsPerChannel samples of each
    // channel, channel after channel. The GPU RLS takes 1 or 2.
    int channels = 1;
    // The filter's whole length: u(n), w and each side of P.
    int totalTaps() const { return tapsPerChannel * channels; }
    // The bounded trace (dsp::Rls) is checked every this many samples since reset: the same samples on
    // the CPU and the GPU, whatever the calls' lengths (the echo canceller uses its 10 ms segment).
    int traceCheckSamples = 4096;
};

struct RlsHealth {
    std::uint64_t reinitialisations = 0;
    std::uint64_t pausedSamples = 0;
    std::uint64_t sanitisedSamples = 0;
};

// Validates settings; throws std::invalid_argument with a message naming the bad value.
void validate(const RlsSettings& settings);
// The check validate() makes of delta, for a delta set later (the filters' setRestartDelta).
void validateDelta(double delta);

// The trace of P(0) = I / delta: the RLS (CPU and GPU) stops forgetting while trace(P) is above it.
double traceBound(const RlsSettings& settings);

} // namespace quell::dsp
