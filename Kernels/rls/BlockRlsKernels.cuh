// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The kernels of the block-exact GPU RLS (GpuBlockRls.h), one per stage of a block, each launched by
// the host in order on one stream. dsp::BlockRls is the CPU twin: the same stages and decisions (pause,
// bounded trace, restart) at the same samples; up to k = 64 the block's recurrence is computed as an
// LDL^T elimination instead of the twin's per-step update of A (the same values in exact arithmetic),
// so the two agree to rounding, not bit for bit.
#include <cuda_runtime.h>

#include <cstddef>

namespace quell::gpu::blockrls {

// Scalars kept on the device between kernels and calls.
struct State {
    double mu;          // prod of 1 / lambda_j over the block's adapting steps so far
    double lambdaNow;   // the bounded trace's choice: lambda, or 1 while trace(P) is above the bound
    double delta;       // P = I / delta at a re-initialisation; the bounded trace's bound is taps / delta
    float pendingMu;    // the deferred update: P <- pendingMu (P - sum_l z_l z_l^T), l < pendingCount
    int pendingCount;
    int pending;
    int reinitP;        // P = I / delta at the next block's start instead of the update
    int restartDue;     // P lost definiteness in this block: the rest is held
    int zeroW;          // a non-finite error: w = 0 at the block's end
    int restartAsked;   // restartCovariance for this stream of a batch: P = I / delta after this block
    int sinceCheck;     // the stream's samples since its last bounded-trace check (as dsp::Rls): its own
                        // count, so that a stream held through calls of a batch checks where a lone filter would
    unsigned long long pausedSamples;
    unsigned long long reinitialisations;
};

// The filter's geometry and device buffers.
struct Geometry {
    int taps;          // N, over all far-end channels
    int channels;      // far-end channels stacked in u
    int length;        // taps per channel, L
    int stride;        // row length of P, U, V, Z (a multiple of 64)
    int block;         // k
    std::size_t historyPitch; // floats per far-end channel in the history window
    int streams;       // independent filters of the same geometry, run side by side (grid z)
    std::size_t callPitch;    // floats per stream in the mic and out buffers (maxCall)
    int vSplits;       // V = P0 U as GEMM tiles with its sum over P's rows in this many parts (tiledVSplits), 0: by rows
};

// V = P0 U as a GEMM's tiles (computeVTiledKernel), where it measured faster than the row kernels: the
// tuning in one place. On an H200, 2026-11-29 (Kernels/rls/NOTES.md run 21), samples/s of the whole
// block: N = 4096, k = 64 241 k -> 272 k; 8192, k = 64 91.8 k -> 108 k. At k = 32 (a tile of 32 steps)
// it lost 1 to 7 % at 4096 and 8192 taps, and at 1024 and 2048 taps it lost at both k (few tiles).
struct TiledVPolicy {
    static constexpr int rows = 128;       // V's rows per thread block (columns of P: P is symmetric)
    static constexpr int steps = 64;       // V's steps per thread block, 4 a thread
    static constexpr int slice = 16;       // rows of P staged in shared memory at a time (32 measured the same)
    static constexpr int threads = 256;
    static constexpr int blocksPerMultiprocessor = 2; // 3 (80 registers, a few spilled) measured 2 % slower
    static constexpr int splitRange = 512; // rows of P per part of the sum, up to maxSplits parts (256: 7 % slower at 4096 taps)
    static constexpr int maxSplits = 16;
    static constexpr int minTaps = 4096;
    static constexpr int minBlock = 33;    // the least k that takes tiles
};

// The parts of V's sum over P's rows for `taps` and the block's k (0 where computeV sums by rows). A
// function of the geometry alone, so a stream of a batch sums in the order a lone filter does (the same
// bits), whatever the streams.
int tiledVSplits(int taps, int k);
// Rows of P per part: the parts cover the taps in whole slices.
__host__ __device__ inline int tiledVSplitRange(int taps, int splits)
{
    const int perSplit = (taps + splits - 1) / splits;
    return (perSplit + TiledVPolicy::slice - 1) / TiledVPolicy::slice * TiledVPolicy::slice;
}
// Per stream: V's parts (splits x k rows of the stride) and the tickets that find each tile's last part.
__host__ __device__ inline std::size_t tiledVPartsPerStream(int splits, int k, int stride)
{
    return splits > 1 ? static_cast<std::size_t>(splits) * static_cast<std::size_t>(k) * static_cast<std::size_t>(stride) : 0;
}
__host__ __device__ inline std::size_t tiledVTicketsPerStream(int splits, int k, int stride)
{
    return splits > 1 ? static_cast<std::size_t>((stride + TiledVPolicy::rows - 1) / TiledVPolicy::rows)
                            * static_cast<std::size_t>((k + TiledVPolicy::steps - 1) / TiledVPolicy::steps)
                      : 0;
}

struct Buffers {
    float* P;
    float* w0;
    float* U;      // k rows: the block's regressors
    float* V;      // k rows: P0 u_j
    float* Z;      // k rows: the deferred update
    double* G;     // k x k, row j: u_a^T P0 u_j for a <= j
    double* H;     // k x k, row j: (P0 u_a)^T (P0 u_j) for a <= j (the trace)
    double* A;     // k x k (recurrenceKernel's)
    double* C;     // k x k, row l: c_l (recurrenceKernel), row l of L^-1 (eliminationKernel)
    double* b;     // k
    double* s;     // k
    double* y0;    // k: u_j^T w0
    double* d;     // k: the block's microphone samples
    unsigned char* paused; // k
    double* stepLambda;    // k: the forgetting factor each step of the block used (the elimination replays them)
    double* traceParts;    // (taps + 3) / 4: trace(P0) of each diagonal 4 x 4 tile, written by startBlock
    State* state;
    float* vParts;         // tiledVPartsPerStream: V's parts, [part][step][row] (null when none)
    unsigned* vTickets;    // tiledVTicketsPerStream: zero between launches (null when none)
    // A flag per stream (device memory), or null: a flagged stream sits this call out. Every stage returns
    // at once for it, so its P, w, history, counters and check phase stay as they were, as if the call
    // had not happened to it (a server's call whose block came late: GpuBlockRls::processBatch).
    const unsigned char* held = nullptr;
};

__device__ inline bool isHeld(const Buffers& b) { return b.held != nullptr && *b.held != 0; }

// Stream s's buffers: each buffer holds `streams` equal parts, stream after stream (GpuBlockRls.cu
// allocates them so), so a kernel of the batch finds its stream's part from blockIdx.z alone.
__host__ __device__ inline Buffers streamBuffers(const Geometry& g, const Buffers& b, int s)
{
    const std::size_t n = static_cast<std::size_t>(g.stride), k = static_cast<std::size_t>(g.block), i = static_cast<std::size_t>(s);
    return Buffers{b.P + i * n * n, b.w0 + i * n, b.U + i * k * n, b.V + i * k * n, b.Z + i * k * n, b.G + i * k * k,
                   b.H + i * k * k, b.A + i * k * k, b.C + i * k * k, b.b + i * k, b.s + i * k, b.y0 + i * k, b.d + i * k,
                   b.paused + i * k, b.stepLambda + i * k, b.traceParts + i * (n / 4), b.state + i,
                   b.vParts ? b.vParts + i * tiledVPartsPerStream(g.vSplits, g.block, g.stride) : nullptr,
                   b.vTickets ? b.vTickets + i * tiledVTicketsPerStream(g.vSplits, g.block, g.stride) : nullptr,
                   b.held ? b.held + i : nullptr};
}

// Every stage runs all g.streams streams (a launch's grid z); history, mic and out hold them stream after
// stream (history g.channels x g.historyPitch floats each, mic and out g.callPitch each).
//
// Columns [begin, end) of the block from the call's samples t0.. (history window, far-end channels
// planar, each with length - 1 older samples in front), their far-end energy (pause) and u^T w0. A
// stream adapts where `adapting` and, when streamAdapting is given (device memory, a flag per stream),
// its flag is nonzero.
void buildColumns(const Geometry& g, const Buffers& b, const float* history, const float* mic, int t0, int begin, int end,
                  bool adapting, const unsigned char* streamAdapting, double silenceEnergy, cudaStream_t stream);
// At a block's start: the deferred update of P (or P = I / delta, each stream's State::delta), and
// trace(P0)'s partial sums.
void startBlock(const Geometry& g, const Buffers& b, cudaStream_t stream);
// V's columns [begin, end) = P0 u_j.
void computeV(const Geometry& g, const Buffers& b, int begin, int end, cudaStream_t stream);
// G and H rows [begin, end).
void computeGram(const Geometry& g, const Buffers& b, int begin, int end, cudaStream_t stream);
// The recurrence over steps [begin, end): outputs to out[0 .. end - begin). Each stream checks its bounded
// trace (taps / State::delta) before the step where its State::sinceCheck passes checkInterval (at most
// one such step: end - begin <= checkInterval). Up to k = 64 an LDL^T elimination that replays the block
// from its first step (BlockRlsKernels.cu says why); past it the per-step recurrence of dsp::BlockRls.
void recurrence(const Geometry& g, const Buffers& b, int begin, int end, int checkInterval, double lambda, float* out,
                cudaStream_t stream);
// The block's end after `steps` steps: w0 += V b; with `restart` (every stream) or a stream's
// restartAsked, P = I / delta next (restartCovariance), else the deferred update's z_l. Resets nothing the next recurrence does not reset itself.
void finishBlock(const Geometry& g, const Buffers& b, int steps, bool restart, cudaStream_t stream);
// Between blocks (no steps taken), the streams whose flag in `marked` (device memory) is nonzero: P = I / delta
// from the next block on, w kept (what finishBlock with `restart` does after a block of no steps).
void restartStreams(const Geometry& g, const Buffers& b, const unsigned char* marked, cudaStream_t stream);
// The held streams' far-end history (`held`, a flag per stream on the device) from the window `from`,
// whose newest length - 1 samples start at fromNewest, to the end of the window `to` after a call of
// `count` samples (at `count`, where the next call takes its newest from): a held stream's window then
// goes on from its last sample, whatever the call put in front. The others are left as they are.
void carryHeldHistory(const Geometry& g, const unsigned char* held, const float* from, std::size_t fromNewest, float* to,
                      std::size_t count, cudaStream_t stream);
// out = w0 + V b of stream `streamIndex` over `steps` steps (its visible weights).
void currentWeights(const Geometry& g, const Buffers& b, int streamIndex, int steps, float* out, cudaStream_t stream);

} // namespace quell::gpu::blockrls
