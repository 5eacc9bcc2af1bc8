// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The echo canceller at its own sample rate, as a chain: a DC/rumble high-pass on both inputs; the far
// end aligned to its echo (FarEndAligner: bulk delay, clock drift); the adaptive linear filter that
// the filter plan chose (FilterPlan.h: RLS on the GPU or the CPU, the frequency-domain Kalman filter, NLMS)
// as the background of a two-path scheme whose fixed foreground copy makes the output (double-talk
// protection; ForegroundEchoFilter), steered by PathChangeDetector, AdaptationGate and FarEndLevelMatch
// (RLS's delta against a quiet far end) and kept no louder than the microphone (OutputGuard); then
// residual echo suppression with comfort noise (ResidualEchoSuppressor), whose frame delays the output
// by latencySamples(). One microphone channel;
// the far end may be stereo (the spec's channels = 2): then one filter over both loudspeaker channels
// learns the two echo paths together.
//
// Threading: prepare() and reset() from a non-real-time thread; process() and setControls() from one
// thread at a time. Neither allocates.
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "aec/AdaptationGate.h"
#include "aec/EchoCancellerSettings.h"
#include "aec/FarEndAligner.h"
#include "aec/FarEndLevelMatch.h"
#include "aec/FilterPlan.h"
#include "aec/ForegroundEchoFilter.h"
#include "aec/OutputGuard.h"
#include "aec/LinearEchoFilter.h"
#include "aec/LoudspeakerDistortionFilter.h"
#include "aec/PathChangeDetector.h"
#include "aec/ResidualEchoSuppressor.h"
#include "dsp/BiquadCascade.h"
#include "dsp/DelayLine.h"

namespace quell::aec {

// What a user may change while audio runs, without a rebuild.
struct CancellerControls {
    // false: the output filter is frozen (the echo path the output is cancelled with stops changing; the
    // adaptive filter behind it keeps learning, so unfreezing resumes at once).
    bool adapt = true;
    double suppressionDb = kDefaultSuppressionDb;   // the suppressor's maximum attenuation; 0 = no suppression
    bool comfortNoise = true;
    bool operator==(const CancellerControls&) const = default;
};

class BackendUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class EchoCanceller : private FarEndAligner::Path {
public:
    // spec: the canceller's rate, the most samples per process() call, and the far end's channels (the
    // microphone is one channel). Throws std::invalid_argument on bad settings or spec,
    // BackendUnavailable when the GPU is required (Backend::Gpu) but not usable.
    void prepare(const EchoCancellerSettings& requested, const dsp::ProcessSpec& spec);
    // The same with the plan made (planLinearFilter, for plan.spec) and the adaptive filter given: a
    // canceller of a batch (engine/MultiStreamCanceller.h) runs one stream of a filter many share. Throws
    // std::invalid_argument when the filter's length or channels are not the plan's.
    void prepare(const EchoCancellerSettings& requested, const FilterPlan& plan, std::unique_ptr<LinearEchoFilter> filter);
    void reset();
    // out is the echo-cancelled microphone delayed by latencySamples(). One far-end channel.
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out);
    // spec().channels spans of the far end, each as long as mic.
    void process(std::span<const float> mic, std::span<const std::span<const float>> refs, std::span<float> out);
    // process() in two halves around the adaptive filter's call, for a caller that runs the filters of
    // many cancellers in one batch: beginBlock() does everything before the call and returns it (what the
    // filter hears, the far end it is given, and where its output goes: `out`); the caller puts the
    // filter's output for `heard` and `ref` into `out` (as filter().processChannels would), then
    // finishBlock() completes out as process() would have. The same samples as process() over the same
    // blocks. The block must end within the segment under way (samplesToSegmentEnd(): blocks of a
    // segment, segmentSamples(rate), from the start always do), and the spans given stay valid until
    // finishBlock().
    struct FilterCall {
        std::span<const float> heard;  // the microphone as the filter hears it
        std::span<const float> ref;    // the far end, channels interleaved
        std::span<float> out;          // the filter's output (the error) into here
    };
    FilterCall beginBlock(std::span<const float> mic, std::span<const std::span<const float>> refs, std::span<float> out);
    void finishBlock();
    int samplesToSegmentEnd() const { return foreground_.samplesToSegmentEnd(); }

    void setControls(const CancellerControls& controls);
    const CancellerControls& controls() const { return controls_; }
    // The controls prepare() starts with: adapting, the settings' suppression and comfort noise.
    CancellerControls defaultControls() const;
    int latencySamples() const { return settings_.suppressor.enabled ? suppressor_.latencySamples() : 0; }
    const ResidualEchoSuppressor& suppressor() const { return suppressor_; }

    const std::string& backendDescription() const { return description_; }
    // Non-empty when Backend::Auto fell back to the CPU: why.
    const std::string& fallbackReason() const { return plan_.fallbackReason; }
    bool onGpu() const { return filter_ && filter_->onGpu(); }
    // The echo path the output is cancelled with (the adaptive filter's, or the frozen copy's).
    std::vector<float> weights() const;
    dsp::RlsHealth health() const { return filter_ ? filter_->health() : dsp::RlsHealth{}; }
    // The settings in use: as requested, with the automatic filter length resolved.
    const EchoCancellerSettings& settings() const { return settings_; }
    // What prepare() was given (and the plan was made for): rate, most samples per call, far-end channels.
    const dsp::ProcessSpec& spec() const { return plan_.spec; }
    // Which filter runs and why (FilterPlan.h).
    const FilterPlan& plan() const { return plan_; }
    // The delay now applied to the far end, in samples (0 while none is found or alignment is off).
    int alignedDelaySamples() const { return aligner_.appliedDelay(); }
    // The echo's lag within the filter's taps (FarEndAligner::echoLag): what the suppressor's far end waits.
    int echoLagSamples() const { return aligner_.echoLag(); }
    // Times the adaptive filter's weights were copied to the output filter (two-path mode).
    long foregroundCopies() const { return foreground_.copies(); }
    // Snapshots of the adaptive filter that failed their probation (ForegroundEchoFilter).
    long rejectedForegroundCopies() const { return foreground_.rejectedCopies(); }
    // The clock drift being compensated, in ppm of the far end's rate (0 when none is found).
    double driftPpm() const { return aligner_.driftPpm(); }
    // The far end's delay as applied now, with its fraction (drift compensation).
    double appliedDelayExact() const { return aligner_.appliedDelayExact(); }
    // Covariance restarts after a suspected echo-path change.
    long pathChangeRestarts() const { return pathChange_.restarts(); }
    // Segments the adaptive filter did not learn from because the far end could not explain the
    // microphone (AdaptationGate).
    long pausedAdaptationSegments() const { return gate_.pausedSegments(); }
    // Alignments the delay estimator proposed and the canceller refused (each once, however often it
    // is proposed again): they would have cut off part of an echo path it cancels (AlignmentShift).
    long refusedAlignmentMoves() const { return aligner_.refusedMoves(); }
    // Samples where the linear output was louder than the microphone and the microphone was played
    // (OutputGuard), and suppressor frames replaced by the microphone's for the same reason.
    long outputFallbackSamples() const { return guard_.fallbackSamples(); }
    long suppressorFallbackFrames() const { return settings_.suppressor.enabled ? suppressor_.fallbackFrames() : 0; }

private:
    // FarEndAligner::Path: the foreground's weights (host memory) when it makes the output, else a copy
    // of the adaptive filter's.
    std::span<const float> cancellingWeights() override;
    int tapsPerChannel() const override { return filter_->taps(); }
    // The fixed foreground makes the output (two-path mode, or a user's freeze); else the adaptive filter.
    bool foregroundMakesOutput() const { return settings_.twoPath || !controls_.adapt; }
    // Samples [at, at + k) of the far-end channels in refScratch_, summed (downmix_ holds it for several).
    std::span<const float> farEndSum(std::size_t at, std::size_t k);
    // The canceller's own segment energies to zero (prepare and reset; the parts reset themselves).
    void clearRunningState();
    // The block's samples [at, at + k) of m (high-passed) and r (aligned, interleaved), o the output:
    // within one segment (a filter call, then the foreground), or a segment's end `before` samples in
    // with `after` more samples behind it (one filter call for both sides).
    void processWithinSegment(std::span<const float> m, std::span<const float> r, std::span<float> o, std::size_t at, std::size_t k);
    // Its halves around the filter's call (beginBlock and finishBlock run them too); begin returns what
    // the filter hears.
    std::span<const float> beginWithinSegment(std::span<const float> m, std::span<const float> r, std::size_t at, std::size_t k);
    void finishWithinSegment(std::span<const float> m, std::span<const float> r, std::span<float> o, std::size_t at, std::size_t k,
                             std::span<const float> heard);
    // n samples from pos of the inputs through the high-passes: the microphone's returned, the far end's
    // into refScratch_.
    std::span<const float> highPassInputs(std::span<const float> mic, std::span<const std::span<const float>> refs, std::size_t pos,
                                          std::size_t n);
    // The far end's channels as process() and beginBlock() check them against the microphone (caller: the
    // messages' prefix).
    void checkInputs(const char* caller, std::span<const float> mic, std::span<const std::span<const float>> refs) const;
    // The far end of the block's first n samples as the filters take it (refScratch_, or interleaved).
    std::span<const float> filterFarEnd(std::size_t n) const;
    // The block's output guard and residual suppression (m: the high-passed microphone).
    void finishOutput(std::span<const float> m, std::span<float> o);
    // Samples [at, at + k) of the block's far end through the aligner (and interleaved, with several
    // channels), before the filters see them.
    void alignFarEnd(std::span<const float> m, std::size_t at, std::size_t k);
    void markSuppressorFar(std::size_t at, std::size_t k);
    void markConcludedSegment(std::size_t end);
    void processAcrossSegmentEnd(std::span<const float> m, std::span<const float> r, std::span<float> o, std::size_t at,
                                 std::size_t before, std::size_t after);
    // What the linear filters hear of m's samples [at, at + k): the microphone, less the loudspeaker's
    // distortion where that stage runs.
    std::span<const float> heardPart(std::span<const float> m, std::span<const float> r, std::size_t at, std::size_t k);
    // The output's samples into the distortion stage and the segment's energies.
    void observeOutput(std::span<const float> mk, std::span<const float> rk, std::span<const float> ok);
    // The segment's end: the aligner's, the path-change detector's, the gate's (adapting_), the level
    // match's and the distortion stage's verdicts. Returns what it decides for the adaptive filter: a
    // suspected echo-path change, and a covariance restart (the path change's, or delta matched to the
    // far end's level); the caller restarts the filter and sets its adaptation at the right sample.
    struct SegmentVerdict {
        bool pathChanged = false;
        bool restart = false;
    };
    SegmentVerdict concludeSegment();
    // At a segment's end with the filter there: concludeSegment(), then the restart and the adaptation
    // it asks of the filter.
    void endSegmentIfDue(std::size_t end);   // end: the block's sample where the segment ends
    // After the filter restarted on an echo-path change at the block's sample `at`: the foreground is
    // told now, the suppressor from that sample on (finishOutput).
    void backgroundRestarted(std::size_t at);

    EchoCancellerSettings settings_{};
    FilterPlan plan_{};
    std::unique_ptr<LinearEchoFilter> filter_;
    dsp::BiquadCascade<float> micHighPass_, refHighPass_[kMaxFarEndChannels];
    std::vector<float> micScratch_;
    std::vector<float> micLessDistortion_, distortionScratch_;   // a block each, at the block's offsets
    std::vector<float> backgroundScratch_;   // the adaptive filter's error across a segment's end
    std::vector<float> weightsAtSplit_;      // and its weights at that end
    std::vector<float> refScratch_;       // planar: channel c at [c * maxBlock, (c + 1) * maxBlock)
    std::vector<float> refInterleaved_;   // the filters' input with several far-end channels
    std::vector<float> downmix_;          // for the delay estimator, with several far-end channels
    ForegroundEchoFilter foreground_;   // prepared in every mode: it also holds a frozen filter
    ResidualEchoSuppressor suppressor_;
    // The suppressor's far end waits for the echo (FarEndAligner::echoLag): a filter that covers the
    // bulk delay is not realigned, and the far end's power would otherwise predict the echo early.
    dsp::DelayLine suppressorFar_;
    std::vector<float> suppressorFarScratch_;
    // Per sample of the block, as they stood while the linear stage ran over it (see process()): whether
    // the suppressor takes the far end as silence there (the gate's verdict), and the echo's lag.
    std::vector<unsigned char> suppressorFarSilent_;
    std::vector<int> suppressorFarLag_;
    // The block's samples where a path change was concluded, in order (at most one a segment): the
    // suppressor hears of each there, not at the block's end, whatever the block's size.
    std::vector<std::size_t> suppressorPathChanges_;
    std::size_t suppressorPathChangeCount_ = 0;
    PathChangeDetector pathChange_;
    AdaptationGate gate_;
    FarEndLevelMatch levelMatch_;
    OutputGuard guard_;
    LoudspeakerDistortionFilter distortion_;   // prepared only with settings.distortionFilter
    FarEndAligner aligner_;
    std::vector<float> cancelWeights_;  // the adaptive filter's weights, copied when they make the output
    double segMic_ = 0.0, segOut_ = 0.0, segRef_ = 0.0, segEstimate_ = 0.0;
    CancellerControls controls_{};
    // Between beginBlock() and finishBlock().
    struct PendingBlock {
        bool open = false;
        std::size_t samples = 0;
        std::span<const float> heard;
        std::span<float> out;
    };
    PendingBlock pendingBlock_{};
    bool adapting_ = true;   // the gate's verdict for the segment under way (the filter's and the suppressor's)
    std::string description_;
};

} // namespace quell::aec
