// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Whole recordings as the calls of one MultiStreamCanceller, offline (quell-render --batch --calls): a
// server's archive through the many-calls engine, its filters one batch on the GPU. Each recording's
// microphone channels are calls; a recording at another rate than the canceller's is resampled to it
// and back with the EchoPipeline's resamplers, and its output is what an EchoPipeline with the same
// canceller gives for it (quell-render, a lone RealtimeEngine offline), delay removed: on the CPU the same
// samples; on the GPU the batch's filter's (the RLS batch gives each call a lone GPU filter's bits, the
// Kalman batch the CPU Kalman filter's with the batch's block up to rounding).
//
// Recordings join (add) while others run and leave when they end (step() returns them), so a long list
// keeps the engine full. Each recording is resampled whole when it joins: memory is a few times its
// samples.
//
// Threading: one thread.
#include <cstddef>
#include <deque>
#include <span>
#include <vector>

#include "dsp/PolyphaseResampler.h"
#include "engine/MultiStreamCanceller.h"

namespace quell::engine {

class OfflineCallBatch {
public:
    // settings.sampleRate is the cancellers' rate; one far-end channel (a stereo far end is mixed first).
    // Throws as MultiStreamCanceller::prepare.
    void prepare(const MultiStreamSettings& settings);
    int freeStreams() const { return calls_.maxStreams() - calls_.openStreams(); }
    bool idle() const { return recordings_.empty(); }

    // A recording joins: mic holds 1 or 2 channels of the same length, far its far end (shorter is
    // silent after its end, longer is cut), at hostRate. Returns its id (0, 1, 2, ... in the order added).
    // Throws std::invalid_argument when it has more channels than freeStreams() or a bad rate.
    int add(std::vector<std::vector<float>> mic, std::span<const float> far, int hostRate);

    // One block of every recording that has one; the recordings that ended with it, their outputs the
    // microphone's channels and length.
    struct Finished {
        int id = -1;
        std::vector<std::vector<float>> out;
        int latencySamples = 0;   // the pipeline's delay that was taken out, in host samples
        dsp::RlsHealth health{};  // its first channel's filter's, at its end
    };
    std::vector<Finished> step();

    const MultiStreamCanceller& engine() const { return calls_; }

private:
    struct Recording {
        int id = -1;
        int hostRate = 0;
        bool resampling = false;
        std::size_t frames = 0, low = 0, pos = 0;   // host frames; samples at the canceller's rate (and a block's padding)
        int latency = 0;
        std::vector<int> streams;
        std::vector<std::vector<float>> micLow, outLow;
        std::vector<float> farLow;
    };
    Finished finish(Recording& r);

    MultiStreamCanceller calls_;
    int rate_ = 0;
    int nextId_ = 0;
    std::deque<Recording> recordings_;
    std::vector<MultiStreamCanceller::StreamBlock> blocks_;
};

} // namespace quell::engine
