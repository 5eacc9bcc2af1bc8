#pragma once
// Double-talk protection by two echo paths (the foreground/background scheme): the adaptive filter
// (background, RLS) adapts all the time, and this fixed foreground FIR filter produces the output. Every
// segment (10 ms) the two errors are compared; when the background's error has been clearly smaller for
// `copyAfterSegments` segments in a row, its weights are copied into the foreground.
//
// Why this and not a double-talk detector that freezes adaptation: when the near end talks, the RLS
// weights are pulled towards the near-end speech and its error grows relative to the foreground's,
// so nothing is copied and the output keeps the weights from before the double talk; after an echo-path
// change the background re-converges and its error falls below the stale foreground's, so the copy
// happens within tens of milliseconds, with no detector threshold that a path change could fool into a
// freeze. The background recovers by itself after double talk (RLS memory 0.6 s) while the foreground
// keeps cancelling.
//
// Threading: prepare() from a non-real-time thread; process() from one thread, no allocation (every
// LinearEchoFilter's copyWeights copies into the given span).
#include <cstddef>
#include <span>
#include <vector>

#include "aec/LinearEchoFilter.h"

namespace quell::aec {

struct ForegroundSettings {
    int taps = 1024;                 // in all: taps / channels per far-end channel, as the background's
    int channels = 1;
    int segmentSamples = 160;        // 10 ms at 16 kHz
    double copyWhenBelow = 0.8;      // background error energy below this fraction of the foreground's
    // After the background's covariance was restarted it fits whatever it hears, the near end of a
    // double talk included: its first copy must be clearly better (10 dB), as after a real path change.
    double copyAfterRestartBelow = 0.1;
    int copyAfterSegments = 2;
};

class ForegroundEchoFilter {
public:
    void prepare(const ForegroundSettings& settings);
    void reset();
    // mic = d and ref = the aligned far end as the background saw them (channels interleaved,
    // channels x mic.size() samples); background = its a-priori error
    // for the same samples; out = the foreground's error (may alias background or mic). `source` is the
    // background filter, read when a copy is due.
    void process(std::span<const float> mic, std::span<const float> ref, std::span<const float> background,
                 std::span<float> out, const LinearEchoFilter& source);

    // Samples left in the current segment. The caller runs the background no further than this before
    // calling process(), so that a copy takes the background's weights as they are at the segment's
    // end, whatever the block size (the output does not depend on how the host splits the signal).
    int samplesToSegmentEnd() const { return settings_.segmentSamples - inSegment_; }
    int segmentSamples() const { return settings_.segmentSamples; }
    // Advances the segment clock by n samples without filtering (the foreground idle: one-path mode).
    void skip(std::size_t n) { inSegment_ = static_cast<int>((static_cast<std::size_t>(inSegment_) + n) % static_cast<std::size_t>(settings_.segmentSamples)); }

    // Off: the foreground keeps its weights whatever the background does (a user's freeze).
    void setCopying(bool on) { copying_ = on; }
    // The background was restarted: until its next copy, require copyAfterRestartBelow.
    void backgroundRestarted() { restarted_ = true; }
    // Takes the background's weights now (no allocation).
    void copyFrom(const LinearEchoFilter& source);

    std::span<const float> weights() const { return {w_.data(), w_.size()}; }
    long copies() const { return copies_; }

private:
    ForegroundSettings settings_{};
    std::vector<float> w_;
    std::vector<float> line_;   // per far-end channel: twice its taps (newest window contiguous)
    std::size_t pos_ = 0;
    double segFg_ = 0.0, segBg_ = 0.0;
    int inSegment_ = 0, better_ = 0;
    long copies_ = 0;
    bool copying_ = true;
    bool restarted_ = false;
};

} // namespace quell::aec
