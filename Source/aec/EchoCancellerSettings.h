// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the echo canceller is asked to do, with every limit beside the check that enforces it. The filter
// length is per far-end channel everywhere above the filters themselves. What it is fed (its rate, the
// most samples per call, the far end's channels) travels beside the settings in a dsp::ProcessSpec.
#include <algorithm>

#include "aec/Backend.h"
#include "aec/ClockDriftTracker.h"
#include "aec/FilterKind.h"
#include "aec/ResidualEchoSuppressor.h"
#include "dsp/ProcessSpec.h"

namespace quell::aec {

inline constexpr int kMaxFarEndChannels = 2;
// The filter length a user may ask for, per far-end channel (the GPU takes 8192 in all channels together;
// longer stereo filters run on the CPU).
inline constexpr int kMinTaps = 8;
inline constexpr int kMaxTaps = 8192;
inline constexpr int kMinSampleRate = 8000;
inline constexpr int kMaxSampleRate = 192000;
inline constexpr double kMaxDelaySeconds = 4.0;

struct EchoCancellerSettings {
    // Per far-end channel. 0 = automatic: on the GPU 256 ms (4096 taps at 16 kHz: a 0.3-0.5 s room's tail
    // is there to 30-50 dB) where that runs three times faster than real time here, measured at prepare,
    // else 128 ms; on the CPU 256 ms of the Kalman filter (filter Auto or Kalman); RLS asked for on the
    // CPU 1024 (64 ms at 16 kHz: the direct path and the early, strong part of the echo; the rest is the
    // residual suppressor's). settings() reports the length chosen.
    int taps = 0;
    // RLS forgetting factor; 0 = automatic (effectiveLambda): a memory of 1/(1 - lambda) = 10 x the
    // filter's taps and at least 10,000 samples (0.6 s at 16 kHz), long against the filter length so that
    // the estimate is not noisy, short enough to re-converge within a second after the room changes.
    // (4096 taps, physical rooms of the corpus: lambda 0.9999, a memory of 2.4 x the taps, cost 1.4 to
    // 3.9 dB of steady ERLE in single talk, and 13 dB of ERLE and 20 dB of near-end SNR in double talk,
    // against 0.99998.)
    double lambda = 0.0;
    // P(0) = I / delta, and the bound on trace(P) (dsp::traceBound: N / delta); 0 = automatic
    // (effectiveDelta): 0.01, a fast start for speech-level signals (-20..-30 dBFS), and 0.03 for filters
    // of 4096 taps or more in all, where float32 P lost its positive definiteness after a few seconds of
    // speech and was re-initialised (physical corpus, GPU RLS 4096: speech-rt300-enr30-d300 and, at 2 x
    // 2048, the stereo file with two mics). At 0.03 neither is re-initialised and every file of that
    // corpus is within 0.4 dB of steady ERLE of 0.01's or better (double talk in a 0.3 s room 27.8 ->
    // 33.1 dB; near-end SNR after the fit the same or better); 0.1 cost 2.2 and 3.3 dB on two files.
    // Below 4096 taps 0.01 stays: CPU RLS at 256 taps on the short corpus lost 1 to 4.6 dB at 0.03.
    double delta = 0.0;
    // Removes DC and rumble from mic and reference before the filter (2nd-order Butterworth).
    double highPassHz = 40.0;
    Backend backend = Backend::Auto;
    // The adaptive filter (FilterKind.h): Auto = RLS on the GPU; on the CPU the frequency-domain Kalman
    // filter with an automatic length, and with a length asked for RLS where it fits the real-time
    // budget (or offline), the Kalman filter otherwise.
    FilterKind filter = FilterKind::Auto;
    // The Kalman filter's block B, a power of two from 16 to 4096 (dsp::PbfdkfSettings::blockSize); 0 =
    // automatic (dsp::automaticBlockSize: about taps / 32, 64 to 256). A many-calls batch on the GPU takes
    // every stream's 10 ms in whole blocks, so it picks one that divides them (MultiStreamCanceller.h).
    int kalmanBlockSize = 0;
    // Real-time use: the fraction of one core the CPU filter may take at this rate (0: no limit, offline).
    // When RLS of `taps` does not fit, the Kalman filter of the same length runs instead (NLMS only if
    // that does not fit either; see CpuFilterChoice.h) and backendDescription() says which.
    double cpuRealtimeBudget = 0.0;
    // Threads of the CPU RLS (0: automatic, see dsp::Rls::setWorkerThreads). 1 avoids the per-sample
    // barrier, which costs more than it saves on a loaded machine (offline evaluation).
    int cpuThreads = 0;
    // Far-end delay alignment: bulk delays from 0 to maxDelaySeconds are found and followed (0: off, the
    // reference goes to the filter as it comes). The reference is delayed by the estimate less
    // alignMarginSeconds, which keeps a few taps before the direct path (the estimate is at 4 kHz
    // resolution and the strongest reflection may come after a weaker first one).
    double maxDelaySeconds = 1.0;
    double alignMarginSeconds = 0.004;
    // Double-talk protection (ForegroundEchoFilter): the output comes from a fixed copy of the adaptive
    // filter, refreshed whenever the adaptive one is clearly better. Off: the adaptive filter's output.
    bool twoPath = true;
    // A model of a loudspeaker driven into distortion, fitted with the linear filter's weights and taken
    // off the microphone before the linear filters (LoudspeakerDistortionFilter); needs the two-path
    // scheme, whose foreground weights it filters with. Off by default: measured on the physical corpus
    // (H100, GPU RLS 4096 taps, suppressor on) it gained 1.5 and 1.6 dB of steady ERLE on the 18 dB SDR and
    // mild tanh loudspeakers but lost 1.3 dB at 10 dB SDR, and with CPU RLS 1024 taps lost 1.7 and 4.1 dB:
    // the residual suppressor suppresses less behind a linear output that the model has improved, more
    // than the model gains. Every scenario without a nonlinearity is unchanged, bit for bit.
    bool distortionFilter = false;
    // Residual echo suppression and comfort noise after the linear filter (enabled: N - 1 samples of
    // latency, 127 at 16 kHz; the amount and the comfort noise can change at run time).
    SuppressorSettings suppressor{};
    // Restart the filter's covariance when the output loses its echo reduction (PathChangeDetector).
    // One far-end channel only: with several, the loudspeakers' strongly correlated signals leave the
    // filter's solution partly undetermined, and a change in how they relate (a voice moving from one
    // side to the other) looks like a path change while the RLS follows it by itself, fast, in the
    // directions the new signals excite; a restart throws away what it knows in all the others
    // (measured on the physical stereo speech scenario at 2 x 4096 taps on the H100: 16.2 dB of ERLE
    // with restarts, 27.4 without).
    bool restartOnPathChange = true;
    // Follow clock drift between far end and microphone (ClockDriftTracker): the far end is read at a
    // fractional delay that moves every sample. Needs delay alignment (maxDelaySeconds > 0) and a bulk
    // delay of at least 0.5 ms to move within.
    DriftSettings drift{};
    // Equal settings make equal cancellers (a shared many-calls engine takes calls of equal settings).
    bool operator==(const EchoCancellerSettings&) const = default;
};

// The canceller's usual rate: the pipelines resample to it (EchoPipeline), and 16 kHz is what every
// default above was measured at.
inline constexpr int kCancellerRate = 16000;

// The canceller's segment, 10 ms at its rate: the foreground decides once per segment, and the linear
// filter's calls (the RLS's trace checks, the GPU's launches) end at its boundaries.
inline constexpr int segmentSamples(int sampleRate) { return std::max(1, sampleRate / 100); }

// The forgetting factor the filter runs with: settings.lambda, or when that is 0 the automatic one
// (memory max(10000, 10 x taps x far-end channels) samples).
double effectiveLambda(const EchoCancellerSettings& settings, int farEndChannels);
// The automatic forgetting factor of a filter of `totalTaps` taps (all far-end channels).
double automaticLambda(int totalTaps);
// delta, or with 0 the automatic value for a filter of `totalTaps` taps (all far-end channels).
double effectiveDelta(const EchoCancellerSettings& settings, int totalTaps);

// Throws std::invalid_argument naming the first value outside its range: the spec's (rate
// kMinSampleRate..kMaxSampleRate, 1..kMaxFarEndChannels far-end channels, a positive block), then the
// settings' (taps 0 is automatic).
void validate(const EchoCancellerSettings& settings, const dsp::ProcessSpec& spec);

} // namespace quell::aec
