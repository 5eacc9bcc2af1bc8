// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Double-talk protection by two echo paths (the foreground/background scheme): the adaptive filter
// (background, RLS) adapts all the time, and this fixed foreground FIR filter produces the output. Every
// segment (10 ms) the two errors are compared; when the background's error has been clearly smaller for
// `copyAfterSegments` segments in a row, a snapshot of its weights goes on probation: for the next
// segments (one or two, see probationSegments) it filters as a fixed filter beside the foreground, and
// replaces it only if it, too, is clearly better over them and no worse in any of them.
//
// Why this and not a double-talk detector that freezes adaptation: when the near end talks, the RLS
// weights are pulled towards the near-end speech and its error grows relative to the foreground's,
// so nothing is copied and the output keeps the weights from before the double talk; after an echo-path
// change the background re-converges and its error falls below the stale foreground's, so the copy
// happens within tens of milliseconds, with no detector threshold that a path change could fool into a
// freeze. The background recovers by itself after double talk (RLS memory 0.6 s) while the foreground
// keeps cancelling.
//
// Why the probation: an adaptive filter's a-priori error is not the error of its weights. An RLS whose
// memory is ten times its taps follows what it hears from one sample to the next; in double talk, or
// with a far end of faint noise and a near end talking, it partly predicts the near end through the far
// end's samples, and its error looks better than the foreground's while its weights, held still, only
// add noise. A fixed snapshot cannot follow anything: it beats the foreground only where its weights
// explain the microphone from the far end, which is what echo reduction is. (Measured on the corpus: at
// +6 dB echo-to-near-end double talk the plain comparison copied the background into the output and left
// 20 dB of near-end SNR; with a far end of -90 dBFS noise the background learnt near-end speech with
// weights 60 dB too large.)
//
// Threading: prepare() from a non-real-time thread; process() from one thread, no allocation (every
// LinearEchoFilter's copyWeights copies into the given span).
#include <cstddef>
#include <span>
#include <vector>

#include "aec/LinearEchoFilter.h"

namespace quell::aec {

struct ForegroundSettings {
    int tapsPerChannel = 1024;       // as the background's
    int totalTaps() const { return tapsPerChannel * channels; }
    int channels = 1;
    int segmentSamples = 160;        // 10 ms at 16 kHz
    double copyWhenBelow = 0.8;      // background (and then candidate) error energy below this fraction of the foreground's
    // After the background's covariance was restarted it fits whatever it hears, the near end of a
    // double talk included: its first copy must be clearly better (10 dB), as after a real path change.
    double copyAfterRestartBelow = 0.1;
    int copyAfterSegments = 2;
    // A foreground that reduces the microphone by less than goodForegroundDb and leaves more than 6 dB over
    // its own quietest segments (double talk, a path change, convergence) is replaced only by a snapshot
    // whose error is below this fraction of its own.
    double goodForegroundDb = 20.0;
    double copyWhenLeavingMuchBelow = 0.5;
    // A good foreground takes a snapshot after the background has been no worse for refineAfterSegments.
    double refineWhenBelow = 1.0;
    int refineAfterSegments = 5;
    // In the probation of such a snapshot, a segment where the foreground's output is its noise (within
    // 6 dB of its quietest segments) and 3 dB under the microphone (it removes echo) counts as worse only
    // where the snapshot's error exceeds the foreground's by this factor: there both errors are the noise,
    // and their difference over 10 ms is a coin toss that seven segments in a row rarely passed, so at an
    // echo-to-noise ratio of 10 dB the foreground trailed the background by 1 to 3 dB of ERLE for seconds.
    // Where the near end talks the output is not its noise, and the strict test stands. Measured (physical
    // corpus, CPU defaults, against 1): white and pink noise at 10 dB echo-to-noise, steady ERLE 19.9 ->
    // 21.1 and 20.0 -> 20.8 dB; mono mean 29.75 -> 29.96; near-end SNR in double talk 32.23 -> 32.53; a
    // lone near end over line noise unchanged (122 dB; without the 3 dB condition, 44 at -50 dBFS of
    // speech-shaped line noise: the foreground there removes nothing, and a snapshot that had fitted the
    // near end passed). 1.6: the same figures within 0.01 dB.
    double refineNoiseTolerance = 1.25;
    // Segments a snapshot stays on probation; 0: a quarter of the filter's length (taps / 4 samples), at
    // least one segment and at most two (1 up to 640 taps, 2 from 641 on).
    int probationSegments = 0;
    // ... where the foreground was good when the snapshot was taken and removed at least 3 dB of the
    // microphone (a refinement): one segment. A held snapshot wears out wherever the far end moves into
    // what it has not learnt. With music as the far
    // end (a few spectral lines at a time, a new chord every 2 s) the background re-learnt each chord's
    // lines within 50 to 100 ms while each snapshot, seven segments on probation at 4096 taps, was
    // outdated by the time it was taken, and the foreground trailed the background by 10 dB of steady ERLE
    // (27.1 against 37.8 with --one-path). Measured (physical corpus, CPU defaults, the 33 mono files with
    // echo: mean steady ERLE / mean near-end SNR after the fit of the 9 double-talk files / music alone /
    // music under a near-end talker, steady ERLE): a quarter of the length for both (7 at 4096 taps)
    // 29.97 / 32.52 / 27.1 / 27.0 dB; 1 and 7 30.16 / 32.49 / 28.6 / -; 1 and 3 30.19 / 32.56 / 30.9 /
    // 30.1; 1 and 2 30.28 / 32.58 / 31.7 / 30.8; 1 and 1 30.42 / 32.60 / 32.3 / 31.2. The lone near end
    // over line noise stayed at 122 dB in every one and no double-talk file lost more than 0.3 dB. Two,
    // not one, where the foreground is not good: there the near end may be talking, and a snapshot that
    // has fitted it predicts it for a few milliseconds more (measured before the adaptation gate: 3.7 dB
    // better than the foreground over the next 10 ms).
    int refineProbationSegments = 1;
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

    // process() in two halves, for a caller that runs the background once over a segment's end and the
    // samples after it (EchoCanceller: one GPU round trip per host block). What the foreground outputs,
    // and the probation's verdict at the segment's end, do not depend on the background's error; only
    // the decision to take a new snapshot does. processAhead(): the output for samples up to the
    // segment's end at most, and at the end the probation's verdict. Then, once the background has run
    // over the same samples, catchUp(): its a-priori errors for them, and its weights as they were at
    // the segment's end (read only if a snapshot is due; taps x channels long). Together they leave the
    // foreground exactly as process() would.
    void processAhead(std::span<const float> mic, std::span<const float> ref, std::span<float> out);
    void catchUp(std::span<const float> background, std::span<const float> weightsAtSegmentEnd);

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
    // Takes the background's weights now, without probation (a user's freeze; no allocation).
    void copyFrom(const LinearEchoFilter& source);

    std::span<const float> weights() const { return {w_.data(), w_.size()}; }
    long copies() const { return copies_; }
    // Snapshots that failed their probation (the background's advantage was not in its weights).
    long rejectedCopies() const { return rejected_; }

private:
    // The segment's foreground output is at least 3 dB under the microphone: it removes echo.
    bool removesEcho() const { return segFg_ <= 0.5 * segMic_; }
    // One sample: the far-end line, the foreground's (and a candidate's) error and the segment's energies
    // but the background's.
    float step(float d, const float* ref);
    // The segment's comparisons: the probation's verdict (concludeProbation), then whether to take a new
    // snapshot (decideSnapshot, which reads the background's weights through `copy` only if one is due).
    void concludeProbation();
    template <typename CopyWeights>
    void decideSnapshot(CopyWeights&& copy);

    ForegroundSettings settings_{};
    std::vector<float> w_, candidate_;
    std::vector<float> line_;   // per far-end channel: twice its taps (newest window contiguous)
    std::size_t pos_ = 0;
    double segMic_ = 0.0, segFg_ = 0.0, segBg_ = 0.0, segCandidate_ = 0.0;
    double goodForeground_ = 0.01;
    double probeFg_ = 0.0, probeCandidate_ = 0.0;   // the probation's energies so far
    int probationSegments_ = 1, probed_ = 0;
    bool probeGood_ = false;   // the foreground was good when the probation began
    bool probeRefines_ = false;   // ... and removed echo: refineProbationSegments
    double floor_ = -1.0;   // the foreground's quietest segment energy (< 0: none yet)
    int inSegment_ = 0, better_ = 0, refine_ = 0;
    long copies_ = 0, rejected_ = 0;
    bool probing_ = false;
    bool copying_ = true;
    bool restarted_ = false;
    // concludeProbation()'s view for decideSnapshot(): taken before the verdict, as the segment saw it.
    double below_ = 0.0;
    bool good_ = false;
};

} // namespace quell::aec
