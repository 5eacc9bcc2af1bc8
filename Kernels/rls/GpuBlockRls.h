// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The block-exact GPU RLS (issue 17): k samples per pass over P, the per-sample RLS's outputs up to
// rounding. The same recursion, order and safeguards as quell::dsp::BlockRls (its CPU twin, which says
// why each step is as it is): V = P0 U and the previous block's deferred rank-k update of P in full-grid
// kernels, the k-step recurrence in float64 in one thread block, the block's end (w, the next update's
// z_l) in a full-grid kernel. No host round trip per block: every decision (pause, bounded trace, restart)
// is taken on the device, and the host only counts samples.
//
// A batch: `streams` independent filters of the same settings, run side by side in every launch (grid z),
// in step: every call gives each stream the same number of samples (or none: a held stream), so their
// blocks begin and end together; each has its own P, w, pauses, bounded trace, restarts and health, and
// outputs what a filter of its own would, bit for bit (the same kernels on the same values).
//
// Threading: one thread at a time; the object owns its device memory and stream. prepare() allocates;
// process() does not (calls longer than maxCall are split).
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dsp/RlsSettings.h"

namespace quell::gpu {

class GpuBlockRls {
public:
    static constexpr int kMaxBlock = 256;
    static constexpr int kMaxStreams = 65535; // a launch's grid z

    GpuBlockRls();
    ~GpuBlockRls();
    GpuBlockRls(const GpuBlockRls&) = delete;
    GpuBlockRls& operator=(const GpuBlockRls&) = delete;

    // settings.channels: 1 or 2 far-end channels stacked in u (as dsp::Rls); blockSize: k, 1..kMaxBlock;
    // streams: 1..kMaxStreams filters in one batch. Throws std::invalid_argument on bad settings,
    // CudaError when the device fails.
    void prepare(const dsp::RlsSettings& settings, int blockSize, std::size_t maxCall = 4096, int streams = 1);
    void reset();
    // One stream: mic = d, ref = x (settings.channels interleaved), out = e; out may alias mic.
    void process(const float* mic, const float* ref, float* out, std::size_t samples);
    // One stream: process() over [0, split) and [split, samples) with, between the two, the weights copied
    // into weightsOut (as copyWeights(weightsOut, count)), P restarted if `restart` (restartCovariance())
    // and adaptation set to adaptAfter; the same samples as those calls, in one round trip to the device
    // (the echo canceller's segment ends: aec::LinearEchoFilter::processSplit). Calls longer than maxCall
    // take the calls in turn.
    void processSplit(const float* mic, const float* ref, float* out, std::size_t samples, std::size_t split, bool restart,
                      bool adaptAfter, float* weightsOut, std::size_t count);
    // Every stream, `samples` each, planar: stream s at mic + s x samples, ref + s x samples x channels
    // (its far-end channels interleaved), out + s x samples. out may alias mic.
    void processBatch(const float* mic, const float* ref, float* out, std::size_t samples);
    // The same with controls per stream, for a batch of independent calls, stream s at mic + s x pitch,
    // ref + s x pitch x channels, out + s x pitch (pitch >= samples): adapting[s] (streams() flags)
    // as setAdaptation for stream s alone over this call; restart (streams() flags, or nullptr) marks the
    // streams whose P = I / delta from the call's first sample, as restartCovariance() before it; held
    // (streams() flags, or nullptr) marks the streams that sit this call out: their samples are not read,
    // their out is left as it was, and their state (far-end history, P, w, pauses, the bounded trace's
    // count) stays as it was, so a stream's outputs over the calls it took part in are those of a lone
    // filter given only those calls, bit for bit (a server's call whose block came late goes on from
    // where it was when the block comes). Each call begins and ends blocks: samples a multiple of
    // blockSize(), at most maxCall, after calls that did too.
    void processBatch(const float* mic, const float* ref, float* out, std::size_t samples, std::size_t pitch,
                      const unsigned char* adapting, const unsigned char* restart, const unsigned char* held = nullptr);
    // Stream s back to its state after prepare() (a new call joins the batch); the others go on.
    void resetStream(int stream);
    // From now on every batch call also brings every stream's weights back to host memory, where
    // mirroredWeights(s) (taps() of them) reads them without a round trip: the echo canceller's foreground
    // copies them on its processing thread. Every call must then end a block. Allocates.
    void mirrorWeights();
    const float* mirroredWeights(int stream) const;
    // Why prepare(settings, blockSize, maxCall, streams) would refuse on the current device, or empty.
    // Never throws.
    static std::string whyNot(const dsp::RlsSettings& settings, int blockSize, std::size_t maxCall, int streams = 1);
    // A stream's weights after the last sample (w0 + V b of the block so far).
    std::vector<float> weights(int stream = 0) const;
    // The first `count` of them into `out` (count <= taps), without allocating: the echo canceller's
    // foreground copy runs on its processing thread.
    void copyWeights(float* out, std::size_t count, int stream = 0) const;
    // Every stream: P = I / delta from the next block on, w kept; the current block ends here.
    void restartCovariance();
    // One stream of a batch: P = I / delta from the end of the current block on (within k samples), w kept;
    // the other streams go on as they were.
    void restartCovariance(int stream);
    // Stream s's P = I / delta at its later restarts (restartCovariance, the loss of definiteness's) and its
    // bounded trace's bound taps / delta from its next pass, until reset() or resetStream(s) (as
    // dsp::Rls::setRestartDelta; aec/FarEndLevelMatch.h says why). Throws std::out_of_range for no such
    // stream, std::invalid_argument unless delta is positive and finite. Waits for the device.
    void setRestartDelta(int stream, double delta);
    void setAdaptation(bool on) { adapting_ = on; }
    dsp::RlsHealth health(int stream = 0) const;
    int taps() const;
    int blockSize() const;
    int streams() const;
    // Device time of the last process() call's kernels, in milliseconds.
    double lastKernelMilliseconds() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    bool adapting_ = true;
};

} // namespace quell::gpu
