// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One block of B samples of the partitioned-block frequency-domain Kalman filter for every stream of a
// batch, in one launch: one thread block per stream, every transform in shared memory (SharedMemoryFft),
// the stream's state (far-end spectra, weight spectra, uncertainty) read from and written to global
// memory once per step that needs it. The steps and their order are dsp::Pbfdkf::updateBlock's (that
// header gives the equations); what differs is where the numbers live:
//  - the weights are kept as spectra (the half spectrum of a real signal, B + 1 bins), not as taps: the
//    constrained update is added to them directly, which saves the CPU's per-partition transform of the
//    taps and gives |W_p|^2 for free;
//  - the output of a block is computed at its end (overlap-save: the same weights for the whole block, as
//    the CPU's time-domain filter has them), so the batch adds B samples of latency the CPU's
//    sample-by-sample output does not;
//  - two partitions' constrained gradients share one complex transform pair (their time signals are real:
//    one is the real part, the other the imaginary part), which halves the transforms per block.
// Mono far end only (the CPU handles a stereo far end).
#include <cuda_runtime.h>

#include <cstdint>

namespace quell::gpu::kalman {

struct StreamScalars {
    double uncertaintyCap = 0.0;            // Phi(0) of partition 0 (no bin is ever less certain)
    long long adaptedBlocks = 0;            // since the last restart (the process noise's schedule)
    unsigned long long reinitialisations = 0;
    unsigned long long pausedSamples = 0;
    unsigned long long sanitisedSamples = 0;
    int pending = 1;                        // Phi waits for the far end's first active stretch
    int priorSamples = 0;                   // while pending: the stretch's samples so far,
    double priorFarEnergy = 0.0;            // and its far-end and microphone energies
    double priorMicEnergy = 0.0;            // (dsp::kPriorMeasureSamples)
    int ringShift = 0;                      // blocks the stream sat out (mod P): its ring's newest slot is
                                            // the batch's plus this, so its spectra stay in order
};

struct BatchGeometry {
    int streams = 0;
    int block = 0;            // B
    int bins = 0;             // M = 2B, the transform size
    int log2Bins = 0;
    int halfBins = 0;         // B + 1 stored bins
    int partitions = 0;       // P
    int taps = 0;             // per stream (the last partition may hold fewer than B)
};

struct BatchState {
    float2* spectra = nullptr;          // [stream][slot][halfBins]: the far-end window's spectrum, a ring of P
    float2* weights = nullptr;          // [stream][partition][halfBins]
    float* uncertainty = nullptr;       // [stream][partition][halfBins]
    float* previousRef = nullptr;       // [stream][B]: the far end's last block (the window's first half)
    StreamScalars* scalars = nullptr;   // [stream]
    const double* priorProfile = nullptr;   // [partition]: Phi(0) of p over the sum of all partitions' Phi(0)
};

struct BatchSchedule {
    double firstNoise = 0.0;            // 1 - A^2 at a restart
    double lastNoise = 0.0;             // 1 - A_final^2, the floor
    double growthBlocks = 0.0;          // 0: a fixed A
    double uncertaintyScale = 3.0;
    float residualWeight = 1.5f;        // dsp::PbfdkfSettings::residualWeight
};

struct BlockIo {
    const float* mic = nullptr;         // [stream][stride], this block at offset
    const float* ref = nullptr;
    float* out = nullptr;
    std::size_t stride = 0;
    std::size_t offset = 0;
    const unsigned char* adapting = nullptr;   // [stream]; nullptr: every stream adapts
    // [stream]; nullptr: none. A held stream sits the block out: nothing of its state changes but its
    // ring shift, and its out is not written (GpuBatchedPbfdkf::process).
    const unsigned char* held = nullptr;
    int newest = 0;                            // the batch's ring slot of this block's far-end spectrum
};

// Shared memory of one thread block, in bytes.
std::size_t blockKernelSharedBytes(const BatchGeometry& g);

void launchBlock(const BatchGeometry& g, const BatchState& state, const BatchSchedule& schedule, const BlockIo& io,
                 int threadsPerStream, cudaStream_t stream);

} // namespace quell::gpu::kalman
