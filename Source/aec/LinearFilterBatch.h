// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The adaptive linear filters of many echo cancellers, one stream each, run together: on the GPU one
// batched block-exact RLS (Kernels/rls/GpuBlockRls.h) takes every stream's block in each launch; on the
// CPU each stream keeps its own filter (the plan's) and the caller may run them side by side. Each stream
// is what a filter of its own would be: its own weights, covariance, pauses, restarts and health.
//
// A call gives every stream the same number of samples, through staging the batch owns (micIn(s),
// refIn(s), errorOut(s), each sized for the largest call at construction): a server's loop writes the
// streams' blocks there, calls process(), and reads the errors. Between calls, each stream's controls
// (setAdaptation, restartCovariance) take effect from its next sample, as LinearEchoFilter's do.
//
// slotFilter(s) is a LinearEchoFilter for stream s that an EchoCanceller can own (prepare with a filter):
// its controls, weights and health are the stream's; its process() is refused, since the batch runs the
// samples (EchoCanceller::beginBlock / finishBlock around the call).
//
// Threading: prepare() allocates; process(), processStream() and the controls do not. process() from one
// thread; processStream(s) (CPU batches: parallelByStream()) for different streams from different threads
// at once; a stream's controls from the thread that runs its canceller, between calls.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "aec/FilterPlan.h"
#include "aec/LinearEchoFilter.h"

namespace quell::aec {

class LinearFilterBatch {
public:
    virtual ~LinearFilterBatch() = default;
    int streams() const { return streams_; }
    std::size_t maxCall() const { return maxCall_; }
    int taps() const { return taps_; }            // per far-end channel
    int channels() const { return channels_; }    // far-end channels
    float* micIn(int stream) { return mic_.data() + static_cast<std::size_t>(stream) * maxCall_; }
    // The stream's far-end channels interleaved.
    float* refIn(int stream) { return ref_.data() + static_cast<std::size_t>(stream) * maxCall_ * static_cast<std::size_t>(channels_); }
    const float* errorOut(int stream) const { return out_.data() + static_cast<std::size_t>(stream) * maxCall_; }

    // Every stream's `samples` (at most maxCall()) from the staging; idle[s] nonzero: stream s sits the
    // call out (a stream no call is using, or whose call's block is late): its staging is not read, its
    // errorOut holds nothing of use, and its filter stays as it was, so that when its samples come it goes
    // on as a filter of its own that never saw the call.
    virtual void process(std::size_t samples, std::span<const unsigned char> idle) = 0;
    // CPU batches: the streams are independent filters, run one at a time by processStream(s, samples)
    // from the caller's threads instead of process(). GPU batches return false.
    virtual bool parallelByStream() const { return false; }
    virtual void processStream(int stream, std::size_t samples);
    // Stream s back to a new filter's state (a call joins).
    virtual void resetStream(int stream) = 0;
    virtual void setAdaptation(int stream, bool on) = 0;
    virtual void restartCovariance(int stream) = 0;
    // As LinearEchoFilter::setRestartDelta, for stream s; the default does not take it.
    virtual bool setRestartDelta(int /*stream*/, double /*delta*/) { return false; }
    // The stream's weights after the last call (taps() x channels(); missing ones zero), without allocating.
    virtual void copyWeights(int stream, std::span<float> out) const = 0;
    virtual dsp::RlsHealth health(int stream) const = 0;
    virtual std::string description() const = 0;
    virtual bool onGpu() const = 0;

    // The LinearEchoFilter face of stream s, for its EchoCanceller; the batch must outlive it.
    std::unique_ptr<LinearEchoFilter> slotFilter(int stream);

protected:
    LinearFilterBatch(int streams, std::size_t maxCall, int taps, int channels);
    float* errorIn(int stream) { return out_.data() + static_cast<std::size_t>(stream) * maxCall_; }
    // The GPU batches' held flags for a call: idle[s] for each stream (none where idle is empty); true
    // when any stream is held.
    bool heldStreams(std::span<const unsigned char> idle, std::span<unsigned char> held) const;
    std::vector<float> mic_, ref_, out_;

private:
    int streams_ = 0;
    std::size_t maxCall_ = 0;
    int taps_ = 0, channels_ = 1;
};

// The filters a plan describes, for `streams` streams in calls of at most maxCall samples. A plan for the
// GPU RLS gives one batched GPU filter (calls a multiple of gpuBatchBlockSamples(maxCall) long); a plan
// for the Kalman filter with kalmanOnGpu one batched GPU Kalman filter (one far-end channel, its block
// dividing every call: kalmanBatchBlockSize); both throw std::invalid_argument where the GPU cannot run
// them, with the reason. Any other plan gives a filter per stream on the CPU.
std::unique_ptr<LinearFilterBatch> makeLinearFilterBatch(const FilterPlan& plan, int streams, std::size_t maxCall,
                                                         bool kalmanOnGpu = false);
// The GPU batch's samples a pass over P for calls of `call` samples: 32 where it divides the call (10 ms
// at 16 or 48 kHz), else the largest divisor of it up to 64, so that every call ends a pass and a
// stream's controls and weights fall between passes.
int gpuBatchBlockSamples(std::size_t call);
// The Kalman filter's block for a batch whose calls are `call` samples: the largest power of two from 16
// up to the automatic block of `taps` (dsp::automaticBlockSize) that divides the call (32 for 10 ms at 16
// or 48 kHz), or 0 where none does (44.1 kHz).
int kalmanBatchBlockSize(int taps, std::size_t call);

} // namespace quell::aec
