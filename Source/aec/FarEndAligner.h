// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The far end, aligned to its echo: a ring per far-end channel delays it by the bulk delay of the echo
// path (FarEndDelayEstimator, on the channels' sum: the loudspeakers share the playback path), so the
// filter's taps cover the room rather than the playback and capture delay; ClockDriftTracker moves that
// delay by a fraction of a sample per sample when the far end's clock and the microphone's differ, read
// through FractionalDelayReader; AlignmentShift refuses a move that would cut off part of the path the
// canceller is cancelling with.
//
// The canceller feeds it every sample before the filters see it (feed), and at every segment's end gives
// it the segment's energies (segment) and asks for its decision (decide), saying through `Path` which
// weights cancel now; decide() reports a move, after which what the filter learnt is wrong.
//
// Threading: as EchoCanceller (prepare/reset off the real-time thread; the rest from one thread; no
// allocation after prepare).
#include <cstddef>
#include <span>

#include "aec/AlignmentShift.h"
#include "aec/ClockDriftTracker.h"
#include "aec/FarEndDelayEstimator.h"
#include "aec/FractionalDelayReader.h"
#include "dsp/DelayLine.h"

namespace quell::aec {

struct AlignerSettings {
    double maxDelaySeconds = 1.0;  // 0: no alignment (the far end passes as it comes)
    double marginSeconds = 0.004;  // taps kept before the direct path
    // An echo that starts further into the filter than this fraction of its taps (and 1.5 margins) is
    // moved to the margin. RLS reaches a path anywhere in its taps, so only a delay that wastes the tail's
    // taps moves it (0.5); the filter plan asks less for the Kalman filter (FilterPlan::alignEchoStartFraction).
    double echoStartFraction = 0.5;
    DriftSettings drift{};
};

class FarEndAligner {
public:
    // The echo path the canceller cancels with, as the aligner needs it.
    class Path {
    public:
        // The weights that make the output now (all channels, channel after channel).
        virtual std::span<const float> cancellingWeights() = 0;
        virtual int tapsPerChannel() const = 0;

    protected:
        ~Path() = default;
    };

    // spec: the rate and the far end's channels.
    void prepare(const AlignerSettings& settings, const dsp::ProcessSpec& spec);
    void reset();
    bool active() const { return line_.channels() > 0; }

    // Feeds the delay estimator (mic and the far end's channel sum, before alignment) and replaces the
    // first n samples of each far-end channel in `planar` (channel c at planar + c * stride) by the far
    // end delayed by the applied delay.
    void feed(std::span<const float> mic, std::span<const float> farSum, float* planar, std::size_t stride, std::size_t n);
    // At a segment's end, with the samples up to it fed and the weights that cancel there: moves the
    // delay if the estimate says so, for the samples fed after. Returns true when it moved: the filter
    // should forget. Taken at segment ends only, the decision falls on the same sample and sees the same
    // weights however the host splits the stream (taken once per call, as it was, a GStreamer pipeline
    // and quell-render moved on different samples of the same files and their outputs differed).
    bool decide(Path& path);
    // One segment's energies (microphone, output, far end) of `samples` samples: evidence for
    // AlignmentShift, and the drift measurement every drift interval.
    void segment(double micEnergy, double outEnergy, double farEnergy, int samples, Path& path);

    int appliedDelay() const { return appliedDelay_; }
    // Where the echo's direct path starts past the applied delay, less the margin: the latest estimate's
    // lag of the echo within the filter's taps (0 before there is one, or with no alignment). A filter
    // that covers a delay is not moved by it, but what predicts the echo from the far end's power (the
    // suppressor's far-end model) must wait for it.
    int echoLag() const { return echoLag_; }
    double appliedDelayExact() const { return appliedDelay_ + driftOffset_; }
    double driftPpm() const { return drift_.ppm(); }
    long refusedMoves() const { return shift_.refusals(); }

private:
    bool shiftKeepsPath(long target, int shift, Path& path);

    AlignerSettings settings_{};
    dsp::ProcessSpec spec_{};
    FarEndDelayEstimator estimator_;
    ClockDriftTracker drift_;
    FractionalDelayReader fractional_;
    AlignmentShift shift_;
    dsp::DelayLine line_;         // the far end's last maxDelay + 1 samples per channel; none: no alignment
    int appliedDelay_ = 0;
    int echoLag_ = 0;
    double driftOffset_ = 0.0;    // added to appliedDelay_ by the drift compensation
    int sinceDriftMeasure_ = 0;
    double driftMic_ = 0.0, driftOut_ = 0.0;
};

} // namespace quell::aec
