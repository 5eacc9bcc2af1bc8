// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The partitioned-block frequency-domain Kalman filter for many independent streams on one GPU (issue 14's
// GPU twin of dsp::Pbfdkf, the building block of the many-calls tier): every stream has its own far end,
// microphone and state; all share the settings (taps, block size, schedule). One kernel launch per block
// of B samples takes every stream's block (PbfdkfBlockKernel.cuh says how), so the cost per stream falls
// as the batch grows until the GPU is full.
//
// Outputs are dsp::Pbfdkf's, stream by stream, up to rounding (Tests/gpu/GpuBatchedPbfdkfTests.cpp), with
// one difference in timing: a block's output exists at the block's end, so a caller that needs samples
// before then waits B samples (the batch works in whole blocks; the CPU filter answers sample by sample).
// Mono far end only; B from 16 to 256.
//
// Threading: one thread at a time; the object owns its device memory and CUDA stream. prepare()
// allocates; process() does not (calls longer than maxBlocksPerCall blocks are split).
#include <cstddef>
#include <memory>
#include <vector>

#include "dsp/PbfdkfSettings.h"
#include "dsp/RlsSettings.h"

namespace quell::gpu {

class GpuBatchedPbfdkf {
public:
    static constexpr int kMaxBlock = 256;

    GpuBatchedPbfdkf();
    ~GpuBatchedPbfdkf();
    GpuBatchedPbfdkf(const GpuBatchedPbfdkf&) = delete;
    GpuBatchedPbfdkf& operator=(const GpuBatchedPbfdkf&) = delete;

    // Throws std::invalid_argument on bad settings (channels must be 1), CudaError when the device fails.
    void prepare(const dsp::PbfdkfSettings& settings, int streams, int maxBlocksPerCall = 64);
    // Every stream back to its initial state.
    void reset();
    // mic, ref, out: streams x samplesPerStream, stream after stream (stream s at s * samplesPerStream);
    // samplesPerStream a multiple of blockSize(). adapting: one flag per stream for the whole call
    // (0: the stream's filter holds still, its samples count as paused), or nullptr for all adapting.
    // out may alias mic.
    void process(const float* mic, const float* ref, float* out, std::size_t samplesPerStream,
                 const unsigned char* adapting = nullptr);
    // The same with stream s's samples at s * hostPitch (hostPitch >= samplesPerStream): a caller's
    // staging sized for its longest call. held: one flag per stream, or nullptr; a held stream sits the
    // call out: its samples are not used, its out holds nothing of use, and its state stays as it was, so
    // its outputs over the calls it takes part in are those of a filter given only those calls (a
    // server's call whose block came late goes on from where it was when the block comes).
    void process(const float* mic, const float* ref, float* out, std::size_t samplesPerStream, std::size_t hostPitch,
                 const unsigned char* adapting, const unsigned char* held = nullptr);

    // Before the next block, per stream (streams() of them, Control values): Keep; RestartUncertainty
    // (dsp::Pbfdkf::restartUncertainty); Reset, the stream starts again from its initial state (as
    // reset() does for all). Copied before it returns.
    enum Control : unsigned char { Keep = 0, RestartUncertainty = 1, Reset = 2 };
    void controlStreams(const unsigned char* controls);
    // From the next call on, every call also brings back every stream's weights as taps and its health,
    // into pinned host memory (mirroredTaps, mirroredHealth): a server's cancellers read them between
    // calls without a device round trip each.
    void mirrorState();
    // Stream s's taps after the last call (taps, tap 0 the newest; dsp::Pbfdkf::weights()), once mirrorState().
    const float* mirroredTaps(int stream) const;
    dsp::RlsHealth mirroredHealth(int stream) const;

    // A server's real-time loop, without the copies into and out of pageable memory: write one block of
    // every stream (streams x B, stream after stream) into blockMic() and blockRef() (pinned host memory
    // the object owns), call processBlock(), and read blockOut(). The pointers stay valid until prepare().
    float* blockMic();
    float* blockRef();
    const float* blockOut() const;
    void processBlock(const unsigned char* adapting = nullptr);

    std::vector<dsp::RlsHealth> health() const;
    int streams() const;
    int blockSize() const;
    int partitions() const;
    // Device time of the last process() call's kernels (copies not included), in milliseconds.
    double lastKernelMilliseconds() const;
    // Device memory the state takes per stream, in bytes.
    std::size_t stateBytesPerStream() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace quell::gpu
