// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Which adaptive filter the echo canceller runs, decided in one place. planLinearFilter() takes the
// settings and what the canceller is fed (dsp::ProcessSpec: rate, block, far-end channels) and returns
// either a plan (where and which filter, its length per far-end channel, its channels and forgetting
// factor, and why it was chosen) or the reason nothing can run as asked, without throwing;
// makeLinearFilter() allocates what a plan says and nothing else decides.
//
// The decisions, in order:
//  - the length: settings.taps, or when 0 the automatic one (on a GPU the longest of 256 and 128 ms that
//    runs three times faster than real time, measured; 256 ms for the CPU's Kalman filter and for its
//    RLS on one or two far-end channels (the fast RLS filters); 1024 taps otherwise);
//  - the GPU RLS when the backend allows it and it can run these settings here (gpuRlsWhyNot); Auto
//    falls back to the CPU on any reason and keeps it in fallbackReason;
//  - on the CPU: a stereo far end with the filter and length automatic runs the stereo filter (the
//    two-channel fast RLS, the Kalman filter and the mean's fast RLS side by side, or what of them fits
//    the real-time budget; also where a GPU could run RLS: FilterPlan.cpp says why); the Kalman filter
//    when asked for; RLS offline; in real time the measured choice of CpuFilterChoice.h (RLS, Kalman or
//    NLMS).
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "aec/EchoCancellerSettings.h"
#include "aec/FarEndAligner.h"
#include "aec/ForegroundEchoFilter.h"
#include "aec/LinearEchoFilter.h"

namespace quell::aec {

enum class FilterEngine { GpuRls, CpuRls, CpuKalman, CpuNlms };

const char* toString(FilterEngine engine);
// Whether the engine is an RLS (on either side): the one filter that forgets by lambda.
constexpr bool isRls(FilterEngine engine) { return engine == FilterEngine::GpuRls || engine == FilterEngine::CpuRls; }

struct FilterPlan {
    FilterEngine engine = FilterEngine::CpuRls;
    // The length (taps per far-end channel), channels and, for RLS, lambda (effectiveLambda), delta and
    // trace checks; the other filters take the length and channels from here.
    dsp::RlsSettings rls{};
    int cpuThreads = 0;         // the CPU RLS's worker threads (0: automatic)
    int kalmanBlockSize = 0;    // the Kalman filter's block (0: automatic), from the settings
    // A stereo far end with the filter left to the canceller (makeCpuStereoFilter): the fast RLS on the
    // channels' mean that runs beside the Kalman filter; with CpuRls, the two-channel fast RLS of `rls`
    // leads them. None otherwise.
    std::optional<dsp::RlsSettings> stereoMeanRls;
    // ... and with them, where the budget has room (offline always), a two-channel fast RLS of half the
    // taps with its own automatic memory (CpuStereoFilter.cpp says why).
    std::optional<dsp::RlsSettings> stereoHalfRls;
    dsp::ProcessSpec spec{};    // the canceller's (the Kalman filter's prior decays per second; the GPU's buffers)
    std::string choice;         // how the filter was chosen, shown after its description, e.g. " (automatic: 256 ms)"
    std::string fallbackReason; // Backend::Auto did not get the GPU: why (empty otherwise)

    int tapsPerChannel() const { return rls.tapsPerChannel; }
    int channels() const { return rls.channels; }
    dsp::PbfdkfSettings kalmanSettings() const;
    // The two-path foreground behind this filter (segments of segmentSamples): how much better a snapshot
    // must be, and for how long, depends on how the filter learns.
    ForegroundSettings foregroundSettings(int segmentSamples) const;
    // How far into this filter the echo may start before the far end is aligned to move it back
    // (AlignerSettings::echoStartFraction): RLS reaches a path anywhere in its taps, the Kalman filter's
    // prior expects it at the first ones.
    double alignEchoStartFraction() const;
};

struct FilterPlanResult {
    enum class Refusal { None, BadSettings, GpuUnavailable };
    FilterPlan plan;                 // valid when refusal is None
    Refusal refusal = Refusal::None;
    std::string whyNot;              // the reason, when refused
    bool ok() const { return refusal == Refusal::None; }
};

// Never throws for settings or devices that cannot run (the result says why); it measures at most a few
// tens of milliseconds (automatic lengths on a GPU, the CPU's real-time choice).
FilterPlanResult planLinearFilter(const EchoCancellerSettings& settings, const dsp::ProcessSpec& spec);

// In a process that runs many cancellers at once (quell-render --batch), the GPU's speed behind an
// automatic length is measured once per setting, by the first plan that asks with no other measurement
// running, and every later plan gets the same figure: each file of a batch then gets the length a lone
// render of the first file got, whatever the files beside it do to the GPU meanwhile. On an H200 the demo
// rendered alone gives 40.4 dB; two copies in a batch with --jobs 2 gave 40.8 dB each, as they measured
// the GPU beside each other; with this, three copies with --jobs 3 are the lone render's file, byte for
// byte. Off by default: a long-lived canceller (quell-live, the plugin) measures the GPU as it is at each
// prepare.
void rememberGpuSpeedMeasurements(bool on);

// The filter a plan describes. Throws only when the device fails while allocating.
std::unique_ptr<LinearEchoFilter> makeLinearFilter(const FilterPlan& plan);

// Why the GPU RLS cannot run `settings` with calls of up to maxBlock samples here (no CUDA in this
// build, no usable device, too long, far-end channels it does not take, no layout fits), or empty.
std::string gpuRlsWhyNot(const dsp::RlsSettings& settings, std::size_t maxBlock);

} // namespace quell::aec
