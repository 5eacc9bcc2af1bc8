// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the persistent RLS kernel needs: device pointers, sizes, and the per-channel state that is
// carried across launches (so a stream split into blocks of any size gives bit-identical output).
#include <cstddef>
#include <cstdint>

namespace quell::gpu::rls {

// Scalar state of one channel between launches. Every block of a channel computes the same scalars
// redundantly (same inputs, same operations, same order), so block 0 alone writes them back.
struct ChannelState {
    double uEnergy;            // running sum of u^2 in float64, re-summed every 4096 samples (as the CPU twin)
    float pendingR;            // 1 / alpha of the deferred rank-one update
    int pending;               // a deferred update of P is due
    int sinceResum;
    unsigned long long samplesDone;  // samples processed since reset: v(n) sits in buffer n & 1, tag n + 1
    unsigned long long reinitialisations;
    unsigned long long pausedSamples;
    unsigned long long sanitisedSamples;
};

struct KernelParams {
    int taps;                  // N
    int paddedColumns;         // 4 * threads * columnChunks >= N: the row stride of P
    int rowsPerBlock;          // R, multiple of 4
    int blocksPerChannel;      // K
    int sharedGroups;          // groups of 4 rows in shared memory (after the register groups)
    int samples;               // samples in this launch
    // Far-end channels stacked in u: 1 or 2, the kernel's INPUTS template parameter (dsp::RlsSettings::channels).
    int inputTaps;             // L = N / channels: each input's part of u
    int inputStride;           // L + maxBlock: one input's history (L samples) followed by this block
    int windowStride;          // inputs * inputStride: a filter's far-end windows, input after input
    int ioStride;              // maxBlock
    int vLength;               // length of one v buffer: max(paddedColumns, K * R)
    float lambda, invLambda, diag;  // diag = 1 / delta
    double silenceEnergy;      // silenceFloor * N: adaptation pauses while sum(u^2) <= this
    std::size_t pStride;       // floats of P per channel: K * R * paddedColumns
    float* P;                  // [channel][K * R][paddedColumns], rows >= N and columns >= N are zero
    float* w;                  // [channel][K * R]
    unsigned long long* v;         // [channel][2][vLength] published words {v_i, tag}
    unsigned long long* partials;  // [channel][2][K][2] published words {u^T v, tag}, {w^T u, tag} per block
    unsigned int* barrier;     // [channel] arrival counters, zeroed before each launch (counterBarrier only)
    int counterBarrier;        // also meet at a counter barrier before collecting (for comparison)
    const float* windowIn;     // [channel][input][inputStride]
    float* windowOut;          // [channel][windowStride]: the kernel writes the next history here
    const float* mic;          // [channel][ioStride]
    float* out;                // [channel][ioStride]
    ChannelState* state;       // [channel]
};

// Shared memory of one block, in bytes: P groups, the reduction ring, v and w of its rows, and in the
// cluster variant the values the other blocks read (v of its rows and 2 partials, twice by parity).
inline std::size_t sharedBytes(int threads, int columnChunks, int rowsPerBlock, int sharedGroups,
                               bool cluster = false)
{
    const std::size_t warps = static_cast<std::size_t>(threads) / 32;
    return static_cast<std::size_t>(sharedGroups) * 4 * columnChunks * threads * 16  // P, float4
           + 2 * 8 * warps * 4 * sizeof(float)                                      // reduction ring
           + 2 * static_cast<std::size_t>(rowsPerBlock) * sizeof(float)             // v, w rows
           + (cluster ? (2 * static_cast<std::size_t>(rowsPerBlock) + 4) * sizeof(float) : 0);
}

} // namespace quell::gpu::rls
