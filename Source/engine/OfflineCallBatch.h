// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Whole recordings as the calls of one MultiStreamCanceller, offline (quell-render --batch --calls): a
// server's archive through the many-calls engine, its filters one batch on the GPU. Each recording's
// microphone channels are calls; each goes through a CallResampler, so its output is what an
// EchoPipeline with the same canceller gives for it (quell-render, a lone RealtimeEngine offline), delay
// removed: on the CPU the same samples; on the GPU the batch's filter's (the RLS batch gives each call a
// lone GPU filter's bits, the Kalman batch the CPU Kalman filter's with the batch's block up to rounding).
//
// Recordings join (add) while others run and leave when they end (step() returns them), so a long list
// keeps the engine full. A recording is read and written as the batch goes (CallRecording), a few
// thousand samples at a time: memory does not grow with its length.
//
// Threading: one thread.
#include <cstddef>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/CallResampler.h"
#include "engine/MultiStreamCanceller.h"

namespace quell::engine {

// A recording's samples, read and written as the batch goes (quell-render's files, or memory).
class CallRecording {
public:
    virtual ~CallRecording() = default;
    virtual int sampleRate() const = 0;
    virtual int micChannels() const = 0;
    // The next frames of each microphone channel into mic[c] and of the far end (one channel, silent past
    // its end) into far, at most their size: how many (0 once the microphone has ended). Throws for a
    // recording that cannot be read on (that recording fails, not the batch).
    virtual std::size_t read(std::span<const std::span<float>> mic, std::span<float> far) = 0;
    // The next outputs of each microphone channel, in order, all of one length: over the recording, the
    // microphone's length. Throws as read.
    virtual void write(std::span<const std::span<const float>> out) = 0;
};

class OfflineCallBatch {
public:
    // settings.sampleRate is the cancellers' rate; one far-end channel (a stereo far end is mixed first).
    // Throws as MultiStreamCanceller::prepare.
    void prepare(const MultiStreamSettings& settings);
    int freeStreams() const { return calls_.maxStreams() - calls_.openStreams(); }
    bool idle() const { return recordings_.empty(); }

    // A recording joins. Returns its id (0, 1, 2, ... in the order added). Throws std::invalid_argument
    // when it has more channels than freeStreams() or a bad rate.
    int add(std::unique_ptr<CallRecording> recording);
    // A recording in memory: mic holds 1 or 2 channels of the same length, far its far end (shorter is
    // silent after its end, longer is cut), at hostRate; its outputs come back in Finished::out.
    int add(std::vector<std::vector<float>> mic, std::span<const float> far, int hostRate);

    // One block of every recording that has one; the recordings that ended with it.
    struct Finished {
        int id = -1;
        std::unique_ptr<CallRecording> recording;
        std::string error;                  // why it failed (its read or write threw); empty when it ended
        std::vector<std::vector<float>> out;   // a recording added in memory: its outputs, the microphone's length
        int latencySamples = 0;             // the pipeline's delay that was taken out, in host samples
        dsp::RlsHealth health{};            // its first channel's filter's, at its end
    };
    std::vector<Finished> step();

    const MultiStreamCanceller& engine() const { return calls_; }
    // Host frames each recording reads at a time.
    static constexpr std::size_t kReadFrames = 4096;

private:
    struct Recording {
        int id = -1;
        std::unique_ptr<CallRecording> io;
        CallResampler resampler;
        std::vector<int> streams;
        bool ended = false, hasBlock = false;
        std::string error;
        std::vector<std::vector<float>> outLow;
    };
    // Reads until the recording has a block, or has ended and put out every sample.
    void fill(Recording& r);
    void drain(Recording& r);
    Finished finish(Recording& r);

    MultiStreamCanceller calls_;
    int rate_ = 0;
    int nextId_ = 0;
    std::deque<Recording> recordings_;
    std::vector<MultiStreamCanceller::StreamBlock> blocks_;
    std::vector<std::vector<float>> micRead_;
    std::vector<float> farRead_;
};

} // namespace quell::engine
