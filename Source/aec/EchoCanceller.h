#pragma once
// The echo canceller at its own sample rate: a DC/rumble high-pass on both inputs, alignment of the far
// end to its echo (FarEndDelayEstimator: the reference is delayed by the bulk delay of the echo path, so
// the taps cover the room rather than the playback and capture delay), then the adaptive linear filter
// (RLS on the GPU or the CPU) as the background of a two-path scheme whose fixed foreground copy makes
// the output (double-talk protection), then residual echo suppression with comfort noise
// (ResidualEchoSuppressor), whose frame delays the output by latencySamples(). One microphone channel;
// the far end may be stereo (farEndChannels = 2): then one RLS over both loudspeaker channels (dsp::Rls
// with a stacked regressor) learns the two echo paths together, on the GPU (a multiple of 4 taps per
// channel) or the CPU.
//
// Threading: prepare() and reset() from a non-real-time thread; process() and setControls() from one
// thread at a time. Neither allocates.
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "aec/AdaptationGate.h"
#include "aec/AlignmentShift.h"
#include "aec/Backend.h"
#include "aec/ClockDriftTracker.h"
#include "aec/FarEndDelayEstimator.h"
#include "aec/FilterKind.h"
#include "aec/FractionalDelayReader.h"
#include "aec/ForegroundEchoFilter.h"
#include "aec/OutputGuard.h"
#include "aec/LinearEchoFilter.h"
#include "aec/PathChangeDetector.h"
#include "aec/ResidualEchoSuppressor.h"
#include "dsp/BiquadCascade.h"

namespace quell::aec {

inline constexpr int kMaxFarEndChannels = 2;

struct EchoCancellerSettings {
    int sampleRate = 16000;
    int farEndChannels = 1;
    // Per far-end channel. 0 = automatic: on the GPU 256 ms (4096 taps at 16 kHz: a 0.3-0.5 s room's tail
    // is there to 30-50 dB) where that runs three times faster than real time here, measured at prepare,
    // else 128 ms; otherwise 1024 (64 ms at 16 kHz: the direct path and the early, strong part of the
    // echo; the rest is the residual suppressor's). settings() reports the length chosen.
    int taps = 0;
    // RLS forgetting factor; 0 = automatic (effectiveLambda): a memory of 1/(1 - lambda) = 10 x the
    // filter's taps and at least 10,000 samples (0.6 s at 16 kHz), long against the filter length so that
    // the estimate is not noisy, short enough to re-converge within a second after the room changes.
    // (4096 taps, physical rooms of the corpus: lambda 0.9999, a memory of 2.4 x the taps, cost 1.4 to
    // 3.9 dB of steady ERLE in single talk, and 13 dB of ERLE and 20 dB of near-end SNR in double talk,
    // against 0.99998.)
    double lambda = 0.0;
    // P(0) = I / delta: a fast start for speech-level signals (-20..-30 dBFS).
    double delta = 1e-2;
    // Removes DC and rumble from mic and reference before the filter (2nd-order Butterworth).
    double highPassHz = 40.0;
    Backend backend = Backend::Auto;
    // The adaptive filter (FilterKind.h): Auto = RLS on the GPU; on the CPU RLS where it fits the
    // real-time budget (or offline), the frequency-domain Kalman filter otherwise.
    FilterKind filter = FilterKind::Auto;
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
};

// The forgetting factor the filter runs with: settings.lambda, or when that is 0 the automatic one
// (memory max(10000, 10 x taps x far-end channels) samples).
double effectiveLambda(const EchoCancellerSettings& settings);

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

class EchoCanceller {
public:
    // Throws std::invalid_argument on bad settings, BackendUnavailable when the GPU is required
    // (Backend::Gpu) but not usable.
    void prepare(const EchoCancellerSettings& requested, std::size_t maxBlock);
    void reset();
    // out is the echo-cancelled microphone delayed by latencySamples(). One far-end channel.
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out);
    // farEndChannels spans of the far end, each as long as mic.
    void process(std::span<const float> mic, std::span<const std::span<const float>> refs, std::span<float> out);
    void setControls(const CancellerControls& controls);
    const CancellerControls& controls() const { return controls_; }
    int latencySamples() const { return settings_.suppressor.enabled ? suppressor_.latencySamples() : 0; }
    const ResidualEchoSuppressor& suppressor() const { return suppressor_; }

    const std::string& backendDescription() const { return description_; }
    // Non-empty when Backend::Auto fell back to the CPU: why.
    const std::string& fallbackReason() const { return fallbackReason_; }
    bool onGpu() const { return filter_ && filter_->onGpu(); }
    // The echo path the output is cancelled with (the adaptive filter's, or the frozen copy's).
    std::vector<float> weights() const;
    dsp::RlsHealth health() const { return filter_ ? filter_->health() : dsp::RlsHealth{}; }
    // The settings in use: as requested, with the automatic filter length resolved.
    const EchoCancellerSettings& settings() const { return settings_; }
    // The delay now applied to the far end, in samples (0 while none is found or alignment is off).
    int alignedDelaySamples() const { return appliedDelay_; }
    // Times the adaptive filter's weights were copied to the output filter (two-path mode).
    long foregroundCopies() const { return foreground_.copies(); }
    // Snapshots of the adaptive filter that failed their probation (ForegroundEchoFilter).
    long rejectedForegroundCopies() const { return foreground_.rejectedCopies(); }
    // The clock drift being compensated, in ppm of the far end's rate (0 when none is found).
    double driftPpm() const { return drift_.ppm(); }
    // The far end's delay as applied now, with its fraction (drift compensation).
    double appliedDelayExact() const { return appliedDelay_ + driftOffset_; }
    // Covariance restarts after a suspected echo-path change.
    long pathChangeRestarts() const { return pathChange_.restarts(); }
    // Segments the adaptive filter did not learn from because the far end could not explain the
    // microphone (AdaptationGate).
    long pausedAdaptationSegments() const { return gate_.pausedSegments(); }
    // Alignments the delay estimator proposed and the canceller refused (each once, however often it
    // is proposed again): they would have cut off part of an echo path it cancels (AlignmentShift).
    long refusedAlignmentMoves() const { return alignmentShift_.refusals(); }
    // Samples where the linear output was louder than the microphone and the microphone was played
    // (OutputGuard), and suppressor frames replaced by the microphone's for the same reason.
    long outputFallbackSamples() const { return guard_.fallbackSamples(); }
    long suppressorFallbackFrames() const { return settings_.suppressor.enabled ? suppressor_.fallbackFrames() : 0; }

private:
    // Feeds the delay estimator and replaces the first n samples of each refScratch_ channel by the far
    // end delayed by the applied delay.
    void alignReference(std::span<const float> mic, std::size_t n);
    // The first n samples of the far-end channels in refScratch_, summed (downmix_ holds it for several).
    std::span<const float> farEndSum(std::size_t n);
    // The canceller's own counters and delay line to zero (prepare and reset; the parts reset themselves).
    void clearRunningState();
    // Accumulates one segment's energies; every drift_.measureInterval() samples hands the filter's
    // weights to the drift tracker.
    void measureDrift(double micEnergy, double outEnergy, std::size_t samples);
    // Whether moving the far end by `shift` more samples (to `target`) keeps the path the filter
    // cancels with (AlignmentShift); a refusal is counted.
    bool shiftKeepsPath(long target, int shift);

    EchoCancellerSettings settings_{};
    std::unique_ptr<LinearEchoFilter> filter_;
    dsp::BiquadCascade<float> micHighPass_, refHighPass_[kMaxFarEndChannels];
    std::vector<float> micScratch_;
    std::vector<float> refScratch_;       // planar: channel c at [c * maxBlock, (c + 1) * maxBlock)
    std::vector<float> refInterleaved_;   // the filters' input with several far-end channels
    std::vector<float> downmix_;          // for the delay estimator, with several far-end channels
    FarEndDelayEstimator delayEstimator_;
    ForegroundEchoFilter foreground_;   // prepared in every mode: it also holds a frozen filter
    ResidualEchoSuppressor suppressor_;
    PathChangeDetector pathChange_;
    AdaptationGate gate_;
    AlignmentShift alignmentShift_;
    OutputGuard guard_;
    ClockDriftTracker drift_;
    FractionalDelayReader fractional_;
    double driftOffset_ = 0.0;          // added to appliedDelay_ by the drift compensation
    std::vector<float> driftWeights_;   // copy of the filter's weights for the drift measurement
    int sinceDriftMeasure_ = 0;
    double driftMic_ = 0.0, driftOut_ = 0.0;
    double segMic_ = 0.0, segOut_ = 0.0, segRef_ = 0.0, segEstimate_ = 0.0;
    CancellerControls controls_{};
    std::vector<float> refDelayLine_;   // rings of the high-passed far end, maxDelay + 1 samples per channel
    std::size_t delayLength_ = 0;
    std::size_t delayWrite_ = 0;
    int appliedDelay_ = 0;
    std::size_t maxBlock_ = 0;
    std::string description_, fallbackReason_;
};

} // namespace quell::aec
