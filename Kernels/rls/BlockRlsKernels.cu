// SPDX-License-Identifier: GPL-3.0-or-later
// The stages of one block of the block-exact RLS (BlockRlsKernels.cuh), each a plain kernel, correct
// against the CPU twin; Kernels/rls/NOTES.md (runs 13 and 14) says what each costs and what was tried.
#include "rls/BlockRlsKernels.cuh"

#include <algorithm>

#include "common/CudaCheck.cuh"

namespace quell::gpu::blockrls {
namespace {

constexpr int kThreads = 256;
// The longest row of G computeGramRowsKernel holds (k's limit, GpuBlockRls::kMaxBlock).
constexpr int kGramMaxRow = 256;

// The sum over the thread block, the same value in every thread (fixed order). `scratch`: one double
// per warp. Every thread of the block must call it.
__device__ double blockSum(double v, double* scratch)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    double total = 0.0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w)
        total += scratch[w];
    return total;
}

__device__ std::size_t at(int row, int stride, int column)
{
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(stride) + static_cast<std::size_t>(column);
}

// trace(P0): the diagonal tiles' partial sums (startBlock), added in a fixed order by the block; the
// same value in every thread. Every thread of the block must call it.
__device__ double blockTrace(const Geometry& g, const Buffers& b, double* scratch)
{
    double part = 0.0;
    for (int i = static_cast<int>(threadIdx.x); i < (g.taps + 3) / 4; i += static_cast<int>(blockDim.x))
        part += b.traceParts[i];
    return blockSum(part, scratch);
}

__global__ void buildColumnsKernel(Geometry g, Buffers all, const float* history, const float* mic, int t0, int begin,
                                   bool adapting, const unsigned char* streamAdapting, double silenceEnergy)
{
    if (streamAdapting != nullptr && !streamAdapting[blockIdx.z])
        adapting = false;
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (isHeld(b))
        return;
    history += blockIdx.z * static_cast<std::size_t>(g.channels) * g.historyPitch;
    mic += blockIdx.z * g.callPitch;
    __shared__ double scratch[kThreads / 32];
    const int j = begin + static_cast<int>(blockIdx.x), t = t0 + static_cast<int>(blockIdx.x);
    float* u = b.U + at(j, g.stride, 0);
    double energy = 0.0, y = 0.0;
    for (int i = static_cast<int>(threadIdx.x); i < g.taps; i += blockDim.x) {
        const int c = i / g.length, lag = i - c * g.length;
        const float x = history[static_cast<std::size_t>(c) * g.historyPitch + static_cast<std::size_t>(g.length - 1 + t - lag)];
        u[i] = x;
        energy += static_cast<double>(x) * x;
        y += static_cast<double>(b.w0[i]) * x;
    }
    energy = blockSum(energy, scratch);
    y = blockSum(y, scratch);
    if (threadIdx.x == 0) {
        b.y0[j] = b.state->zeroW ? 0.0 : y;
        b.d[j] = static_cast<double>(mic[t]);
        b.paused[j] = !adapting || energy <= silenceEnergy;
    }
}

// The pieces of startBlockKernel (a thread per 4 x 4 elements of P: rows row0.., columns column..).
// trace(P0)'s partial sum of a diagonal tile, read from P (no update this block).
__device__ void traceOfTile(const Geometry& g, const Buffers& b, int row0)
{
    double part = 0.0;
    for (int r = 0; r < 4 && row0 + r < g.taps; ++r)
        part += static_cast<double>(b.P[at(row0 + r, g.stride, row0 + r)]);
    b.traceParts[row0 / 4] = part;
}

// P = I / delta's tile.
__device__ void identityTile(float4 (&p)[4], bool diagonal, int row0, int taps, float invDelta)
{
    for (int r = 0; r < 4; ++r) {
        p[r] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (diagonal && row0 + r < taps)
            reinterpret_cast<float*>(&p[r])[r] = invDelta;
    }
}

// One step l of the deferred update: p -= z_l(rows) z_l(columns)^T. fma(-z_il, z_jl, p): the exact
// product is symmetric in i and j, so P stays exactly symmetric.
__device__ void subtractOuter(float4 (&p)[4], float4 zr, float4 zc)
{
    const float zi[4] = {zr.x, zr.y, zr.z, zr.w};
    for (int r = 0; r < 4; ++r) {
        p[r].x = fmaf(-zi[r], zc.x, p[r].x);
        p[r].y = fmaf(-zi[r], zc.y, p[r].y);
        p[r].z = fmaf(-zi[r], zc.z, p[r].z);
        p[r].w = fmaf(-zi[r], zc.w, p[r].w);
    }
}

// p *= mu, stored, and a diagonal tile's trace(P0) part from the new values.
__device__ void storeTile(const Geometry& g, const Buffers& b, float4 (&p)[4], float mu, int row0, int column, bool diagonal)
{
    for (int r = 0; r < 4; ++r) {
        p[r].x *= mu;
        p[r].y *= mu;
        p[r].z *= mu;
        p[r].w *= mu;
        *reinterpret_cast<float4*>(b.P + at(row0 + r, g.stride, column)) = p[r];
    }
    if (diagonal) {
        double part = 0.0;
        for (int r = 0; r < 4 && row0 + r < g.taps; ++r)
            part += static_cast<double>(reinterpret_cast<const float*>(&p[r])[r]);
        b.traceParts[row0 / 4] = part;
    }
}

// A tile's start: false (with a diagonal tile's trace part written) when P has no update this block;
// else p holds P = I / delta (count 0, mu 1) or the tile of P (zero outside P) with the deferred update's
// count and mu.
__device__ bool startTile(const Geometry& g, const Buffers& b, int row0, int column, bool inside, float4 (&p)[4], float& mu,
                          int& count)
{
    const int reinit = b.state->reinitP, pending = b.state->pending;
    const bool diagonal = row0 == column;
    if (!reinit && !pending) {
        if (diagonal && inside)
            traceOfTile(g, b, row0);
        return false;
    }
    mu = 1.0f;
    count = 0;
    if (reinit) {
        identityTile(p, diagonal, row0, g.taps, static_cast<float>(1.0 / b.state->delta));
        return true;
    }
    for (int r = 0; r < 4; ++r)
        p[r] = inside ? *reinterpret_cast<const float4*>(b.P + at(row0 + r, g.stride, column)) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    count = b.state->pendingCount;
    mu = b.state->pendingMu;
    return true;
}

// The block's start: P = (P - sum_l z_l z_l^T) mu, the previous block's deferred update (or P = I / delta
// on a restart), and trace(P0)'s parts. A block per 64 x 64 tile of P on or above the diagonal, a thread
// per 4 x 4 elements of it (each z load from shared memory serves 16 fused multiply-adds), the tile's z
// rows and columns staged through shared memory 16 steps at a time. Each tile is written twice: as itself
// and, through shared memory, transposed into its mirror below the diagonal. Every element takes
// fma(-z_il, z_jl, p) per step in the same order, and the product is symmetric in i and j, so the mirror
// holds the bits its own computation would: P stays exactly symmetric, for half the multiply-adds and
// three quarters of the traffic of the whole square (the lower tiles are written, not read). Blocks below
// the diagonal return at once. Measured on an H100 against the whole square (a thread per 4 x 4 reading z
// from L1 for one stream, these tiles for batches; Kernels/rls/NOTES.md run 18): samples/s at k = 64,
// N = 2048 426 k -> 454 k, 4096 195 k -> 230 k, 8192 61 k -> 85 k; a batch of 256 at N = 512, k = 32
// 7.97 M -> 8.51 M channel-samples/s; N = 1024 the same within 2 %.
constexpr int kStartTile = 64, kStartSteps = 16;
__global__ void __launch_bounds__(256) startBlockKernel(Geometry g, Buffers all)
{
    if (blockIdx.y > blockIdx.x)
        return;
    __shared__ float4 zRows[kStartSteps][kStartTile / 4], zCols[kStartSteps][kStartTile / 4];
    __shared__ float mirror[kStartTile][kStartTile + 1];
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (isHeld(b))
        return;
    const int tx = static_cast<int>(threadIdx.x & 15), ty = static_cast<int>(threadIdx.x >> 4);
    const int tileRow = static_cast<int>(blockIdx.y) * kStartTile, tileColumn = static_cast<int>(blockIdx.x) * kStartTile;
    const int row0 = tileRow + 4 * ty, column = tileColumn + 4 * tx;
    const bool inside = row0 < g.taps && column < g.stride;
    float4 p[4];
    float mu;
    int count;
    if (!startTile(g, b, row0, column, inside, p, mu, count))
        return; // the whole block: the flags are the stream's
    const int loadStep = static_cast<int>(threadIdx.x) / (kStartTile / 4), loadQuad = static_cast<int>(threadIdx.x) % (kStartTile / 4);
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int l0 = 0; l0 < count; l0 += kStartSteps) {
        __syncthreads(); // the previous chunk is read
        const int l = l0 + loadStep;
        zRows[loadStep][loadQuad] = l < count ? *reinterpret_cast<const float4*>(b.Z + at(l, g.stride, tileRow + 4 * loadQuad)) : zero;
        zCols[loadStep][loadQuad] = l < count ? *reinterpret_cast<const float4*>(b.Z + at(l, g.stride, tileColumn + 4 * loadQuad)) : zero;
        __syncthreads();
        const int steps = min(kStartSteps, count - l0);
        for (int m = 0; m < steps; ++m)
            subtractOuter(p, zRows[m][ty], zCols[m][tx]);
    }
    if (inside)
        storeTile(g, b, p, mu, row0, column, row0 == column);
    if (blockIdx.x == blockIdx.y)
        return; // a diagonal tile holds both of its triangles
    // storeTile scaled p by mu where the thread is inside; a thread outside holds zeros (rows past the
    // taps), which its mirror's padding columns hold too.
    for (int r = 0; r < 4; ++r) {
        const float* v = reinterpret_cast<const float*>(&p[r]);
        for (int c = 0; c < 4; ++c)
            mirror[4 * ty + r][4 * tx + c] = inside ? v[c] : 0.0f;
    }
    __syncthreads();
    // Row tileColumn + i of P holds column i of the tile; 16 threads write one such row's 64 floats, a
    // quad each. Rows whose quad starts at or past the taps are padding, never stored (as the tile's own
    // rows past the taps).
    for (int i = static_cast<int>(threadIdx.x) / 16; i < kStartTile; i += 16) {
        const int row = tileColumn + i;
        if (tileColumn + 4 * (i / 4) >= g.taps)
            break;
        const int q = static_cast<int>(threadIdx.x) % 16;
        const float4 v = make_float4(mirror[4 * q][i], mirror[4 * q + 1][i], mirror[4 * q + 2][i], mirror[4 * q + 3][i]);
        *reinterpret_cast<float4*>(b.P + at(row, g.stride, tileRow + 4 * q)) = v;
    }
}

// V = P0 U for the steps [begin, begin + count): each of a block's kWarps warps takes kVRowsPerWarp (1, 2
// or 4) rows of P and up to kVSteps steps at a time, each lane summing its columns (4 lane + 128 h + 0..3) of every (row, step) in
// registers, with one warp sum per output at the end; U's columns pass through shared memory kVChunk at
// a time. Each chunk's loads of P and of U are all issued before any is used (with 4 warps on a
// multiprocessor, a load waited for one at a time costs a memory latency each), every load is 16
// bytes, and each U element read from shared memory serves 4 kVRowsPerWarp fused multiply-adds. The
// order of the sums is fixed, so V does not depend on how a block's steps were split into calls.
constexpr int kVWarps = 4;
constexpr int kVSteps = 32;
constexpr int kVChunk = 256;
constexpr int kVQuads = kVChunk / 128; // float4 per lane and row in a chunk

template <int kVRowsPerWarp, int kWarps = kVWarps>
__global__ void __launch_bounds__(kWarps * 32) computeVKernel(Geometry g, Buffers all, int begin, int count)
{
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (isHeld(b))
        return;
    __shared__ float4 tileU[kVSteps][kVChunk / 4];
    constexpr int threads = kWarps * 32, tileLoads = kVSteps * (kVChunk / 4) / threads;
    const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
    const int row0 = (static_cast<int>(blockIdx.x) * kWarps + warp) * kVRowsPerWarp;
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int j0 = 0; j0 < count; j0 += kVSteps) {
        const int steps = min(kVSteps, count - j0);
        float acc[kVRowsPerWarp][kVSteps];
#pragma unroll
        for (int r = 0; r < kVRowsPerWarp; ++r)
#pragma unroll
            for (int jj = 0; jj < kVSteps; ++jj)
                acc[r][jj] = 0.0f;
        for (int c0 = 0; c0 < g.stride; c0 += kVChunk) {
            const int width = min(kVChunk, g.stride - c0); // a multiple of 64
            float4 p[kVRowsPerWarp][kVQuads];
#pragma unroll
            for (int r = 0; r < kVRowsPerWarp; ++r)
#pragma unroll
                for (int h = 0; h < kVQuads; ++h) {
                    const int row = row0 + r, c = 4 * lane + 128 * h;
                    p[r][h] = (row < g.taps && c < width) ? *reinterpret_cast<const float4*>(b.P + at(row, g.stride, c0 + c)) : zero;
                }
            float4 staged[tileLoads];
#pragma unroll
            for (int q = 0; q < tileLoads; ++q) {
                const int i = static_cast<int>(threadIdx.x) + q * threads;
                const int jj = i / (kVChunk / 4), c = 4 * (i % (kVChunk / 4));
                staged[q] = (jj < steps && c < width) ? *reinterpret_cast<const float4*>(b.U + at(begin + j0 + jj, g.stride, c0 + c)) : zero;
            }
            __syncthreads(); // the previous chunk's reads of the tile are done
#pragma unroll
            for (int q = 0; q < tileLoads; ++q) {
                const int i = static_cast<int>(threadIdx.x) + q * threads;
                tileU[i / (kVChunk / 4)][i % (kVChunk / 4)] = staged[q];
            }
            __syncthreads();
#pragma unroll
            for (int jj = 0; jj < kVSteps; ++jj)
#pragma unroll
                for (int h = 0; h < kVQuads; ++h) {
                    const float4 u = tileU[jj][lane + 32 * h];
#pragma unroll
                    for (int r = 0; r < kVRowsPerWarp; ++r) {
                        float a = acc[r][jj];
                        a = fmaf(p[r][h].x, u.x, a);
                        a = fmaf(p[r][h].y, u.y, a);
                        a = fmaf(p[r][h].z, u.z, a);
                        a = fmaf(p[r][h].w, u.w, a);
                        acc[r][jj] = a;
                    }
                }
        }
#pragma unroll
        for (int r = 0; r < kVRowsPerWarp; ++r)
#pragma unroll
            for (int jj = 0; jj < kVSteps; ++jj) {
                float v = acc[r][jj];
                for (int offset = 16; offset > 0; offset >>= 1)
                    v += __shfl_xor_sync(0xffffffffu, v, offset);
                if (lane == 0 && jj < steps && row0 + r < g.taps)
                    b.V[at(begin + j0 + jj, g.stride, row0 + r)] = v;
            }
        __syncthreads(); // the next pass rewrites the tile
    }
}

// V = P0 U for long filters as a GEMM's tiles. P is symmetric, so V's row r is P's column r times U: a
// thread block takes 128 of V's rows (P's columns, read 16 bytes at a time along P's rows) and 64 steps,
// and sums over one part of P's rows (tiledVSplitRange), 16 rows of P and U's matching columns staged in
// shared memory at a time (two buffers: the next slice's global loads are in flight while this one is
// summed). A thread holds 8 rows x 4 steps: per row of the slice, 8 values of P and 4 of U from shared
// memory serve 32 multiply-adds, and a warp's 8 x 4 threads read 64 rows and 16 steps, each address
// shared by 4 or 8 lanes (the row kernel's lanes each read a different quad of U per 16 multiply-adds,
// and shared memory's bandwidth bounded it). The parts of a tile meet in the last of its
// thread blocks to finish (a ticket), added in part order: every element of V has one order of
// operations, whichever block finishes last and however a block's steps were split into calls.
__global__ void __launch_bounds__(TiledVPolicy::threads, TiledVPolicy::blocksPerMultiprocessor)
    computeVTiledKernel(Geometry g, Buffers all, int begin, int count)
{
    using Policy = TiledVPolicy;
    constexpr int TN = Policy::steps / 16, BN = Policy::steps, BM = Policy::rows, BK = Policy::slice, threads = Policy::threads;
    constexpr int UP = BN + 4; // U's staged rows padded: the transposing stores meet fewer bank conflicts
    constexpr int loadsP = BK * BM / 4 / threads, quadsU = BN * BK / 4, loadsU = (quadsU + threads - 1) / threads;
    static_assert(BM == 128 && BN == 64 && threads == 256 && loadsP * threads * 4 == BK * BM, "the tiles below assume this shape");
    __shared__ __align__(16) float tileP[2][BK][BM];
    __shared__ __align__(16) float tileU[2][BK][UP];
    __shared__ unsigned lastPart;
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (isHeld(b))
        return;
    const int t = static_cast<int>(threadIdx.x), warp = t >> 5, lane = t & 31;
    const int splits = g.vSplits, range = tiledVSplitRange(g.taps, splits);
    const int split = static_cast<int>(blockIdx.y) % splits, stepBlock = static_cast<int>(blockIdx.y) / splits;
    const int rowBase = static_cast<int>(blockIdx.x) * BM, step0 = stepBlock * BN; // step0: from begin
    const int cBegin = split * range, cEnd = min(g.taps, cBegin + range);
    // This thread's rows rowBase + tr + 0..3 and + 32 + 0..3, and steps step0 + ts + 0..TN-1.
    const int tr = (warp & 1) * 64 + (lane & 7) * 4;
    const int ts = (warp >> 1) * (4 * TN) + (lane >> 3) * TN;
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 stageP[loadsP], stageU[loadsU];
    // Rows of P past cEnd (the part's or the taps' end) load as zeros, so U's columns there add exact
    // zeros (U's columns past the taps are zero, never written).
    auto loadSlice = [&](int c0) {
#pragma unroll
        for (int q = 0; q < loadsP; ++q) {
            const int i = t + q * threads, c = c0 + (i >> 5), column = rowBase + 4 * (i & 31);
            stageP[q] = (c < cEnd && column < g.stride) ? *reinterpret_cast<const float4*>(b.P + at(c, g.stride, column)) : zero;
        }
#pragma unroll
        for (int q = 0; q < loadsU; ++q) {
            const int i = t + q * threads, j = step0 + i / (BK / 4), column = c0 + 4 * (i % (BK / 4));
            stageU[q] = (i < quadsU && j < count && column < g.stride) ? *reinterpret_cast<const float4*>(b.U + at(begin + j, g.stride, column))
                                                                       : zero;
        }
    };
    auto storeSlice = [&](int buffer) {
#pragma unroll
        for (int q = 0; q < loadsP; ++q) {
            const int i = t + q * threads;
            *reinterpret_cast<float4*>(&tileP[buffer][i >> 5][4 * (i & 31)]) = stageP[q];
        }
#pragma unroll
        for (int q = 0; q < loadsU; ++q) {
            const int i = t + q * threads, j = i / (BK / 4), c = 4 * (i % (BK / 4));
            if (i < quadsU) {
                tileU[buffer][c][j] = stageU[q].x;
                tileU[buffer][c + 1][j] = stageU[q].y;
                tileU[buffer][c + 2][j] = stageU[q].z;
                tileU[buffer][c + 3][j] = stageU[q].w;
            }
        }
    };
    float acc[8][TN];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    const int slices = (cEnd - cBegin + BK - 1) / BK;
    loadSlice(cBegin);
    storeSlice(0);
    __syncthreads();
    for (int sl = 0; sl < slices; ++sl) {
        const int current = sl & 1;
        if (sl + 1 < slices)
            loadSlice(cBegin + (sl + 1) * BK);
#pragma unroll
        for (int c = 0; c < BK; ++c) {
            const float4 p0 = *reinterpret_cast<const float4*>(&tileP[current][c][tr]);
            const float4 p1 = *reinterpret_cast<const float4*>(&tileP[current][c][tr + 32]);
            const float p[8] = {p0.x, p0.y, p0.z, p0.w, p1.x, p1.y, p1.z, p1.w};
            const float4 v = *reinterpret_cast<const float4*>(&tileU[current][c][ts]);
            const float u[TN] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fmaf(p[i], u[j], acc[i][j]);
        }
        // The buffer written next was last read in the previous slice, before the barrier that ended it.
        if (sl + 1 < slices)
            storeSlice(current ^ 1);
        __syncthreads();
    }
    // A quad of rows r .. r + 3 of step j into V, within the taps.
    auto storeV = [&](int j, int r, float4 v) {
        float* out = b.V + at(begin + j, g.stride, r);
        if (r + 3 < g.taps) {
            *reinterpret_cast<float4*>(out) = v;
        } else {
            const float e[4] = {v.x, v.y, v.z, v.w};
            for (int m = 0; m < 4 && r + m < g.taps; ++m)
                out[m] = e[m];
        }
    };
    // The thread's sums as quads of 4 rows: fn(step from begin, the quad's first row, its sums).
    auto forEachQuad = [&](auto&& fn) {
#pragma unroll
        for (int j = 0; j < TN; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                fn(step0 + ts + j, rowBase + tr + 32 * h, make_float4(acc[4 * h][j], acc[4 * h + 1][j], acc[4 * h + 2][j], acc[4 * h + 3][j]));
    };
    if (splits == 1) {
        forEachQuad([&](int step, int r, float4 v) {
            if (step < count && r < g.taps)
                storeV(step, r, v);
        });
        return;
    }
    // The parts, [part][step from begin][row], rows up to the stride (a multiple of 64: a quad that
    // starts inside it ends inside it).
    const std::size_t partSize = static_cast<std::size_t>(g.block) * static_cast<std::size_t>(g.stride);
    forEachQuad([&](int step, int r, float4 v) {
        if (step < count && r < g.stride)
            *reinterpret_cast<float4*>(b.vParts + split * partSize + at(step, g.stride, r)) = v;
    });
    __threadfence(); // this block's parts are visible before its ticket is taken
    __syncthreads();
    if (t == 0) {
        unsigned* ticket = b.vTickets + static_cast<std::size_t>(stepBlock) * gridDim.x + blockIdx.x;
        lastPart = atomicAdd(ticket, 1u) == static_cast<unsigned>(splits - 1);
        if (lastPart)
            *ticket = 0; // every part has taken its ticket: zero for the next launch
    }
    __syncthreads();
    if (!lastPart)
        return;
    __threadfence();
    // The tile's quads, each the parts added in part order; the parts' loads (through L2: the other
    // blocks' parts are not in this L1) issued together, Policy::maxSplits at most.
    constexpr int quads = BN * BM / 4;
    for (int i = t; i < quads; i += threads) {
        const int step = step0 + i / (BM / 4), r = rowBase + 4 * (i % (BM / 4));
        if (step >= count || r >= g.taps)
            continue;
        float4 v[Policy::maxSplits];
#pragma unroll
        for (int s = 0; s < Policy::maxSplits; ++s)
            v[s] = s < splits ? __ldcg(reinterpret_cast<const float4*>(b.vParts + s * partSize + at(step, g.stride, r))) : zero;
        float4 total = v[0];
#pragma unroll
        for (int s = 1; s < Policy::maxSplits; ++s)
            if (s < splits) {
                total.x += v[s].x;
                total.y += v[s].y;
                total.z += v[s].z;
                total.w += v[s].w;
            }
        storeV(step, r, total);
    }
}

void launchTiledV(const Geometry& g, const Buffers& b, int begin, int count, cudaStream_t stream)
{
    const dim3 grid(static_cast<unsigned>((g.stride + TiledVPolicy::rows - 1) / TiledVPolicy::rows),
                    static_cast<unsigned>(g.vSplits * ((count + TiledVPolicy::steps - 1) / TiledVPolicy::steps)), static_cast<unsigned>(g.streams));
    computeVTiledKernel<<<grid, TiledVPolicy::threads, 0, stream>>>(g, b, begin, count);
}

// Block (x, y): G(j, a) and H(j, a) for j = begin + x, a = y <= j.
__global__ void computeGramKernel(Geometry g, Buffers all, int begin)
{
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (isHeld(b))
        return;
    __shared__ double scratch[kThreads / 32];
    const int j = begin + static_cast<int>(blockIdx.x), a = static_cast<int>(blockIdx.y);
    if (a > j)
        return;
    const float* vj = b.V + at(j, g.stride, 0);
    const float* ua = b.U + at(a, g.stride, 0);
    const float* va = b.V + at(a, g.stride, 0);
    double gs = 0.0, hs = 0.0;
    for (int i = static_cast<int>(threadIdx.x); i < g.taps; i += blockDim.x) {
        gs += static_cast<double>(ua[i]) * vj[i];
        hs += static_cast<double>(va[i]) * vj[i];
    }
    gs = blockSum(gs, scratch);
    hs = blockSum(hs, scratch);
    if (threadIdx.x == 0) {
        b.G[at(j, g.block, a)] = gs;
        b.H[at(j, g.block, a)] = hs;
    }
}

// Block (x, z): row j = begin + x of G and H for stream z, every a <= j in one block. The same sums as
// computeGramKernel to the bit (each a's terms in the order thread t, t + threads, ...; each warp's
// partials by blockSum's tree, the warps' in blockSum's order), for batches, where computeGramKernel's
// (j, a) grid is hundreds of thousands of blocks with two loads a thread each (N = 512, 256 streams:
// 308 us a block of steps, measured).
constexpr int kGramChunk = 8; // the a's whose partial sums a thread holds at once
__global__ void computeGramRowsKernel(Geometry g, Buffers all, int begin)
{
    __shared__ double parts[2][kGramChunk][kThreads / 32];
    __shared__ double rowG[kGramMaxRow], rowH[kGramMaxRow];
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (isHeld(b))
        return;
    const int j = begin + static_cast<int>(blockIdx.x), t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
    const float* vj = b.V + at(j, g.stride, 0);
    for (int a0 = 0; a0 <= j; a0 += kGramChunk) {
        double gs[kGramChunk], hs[kGramChunk];
#pragma unroll
        for (int m = 0; m < kGramChunk; ++m) {
            gs[m] = 0.0;
            hs[m] = 0.0;
        }
        for (int i = t; i < g.taps; i += blockDim.x) {
            const double v = vj[i];
#pragma unroll
            for (int m = 0; m < kGramChunk; ++m) {
                const int a = min(a0 + m, j);
                gs[m] += static_cast<double>(b.U[at(a, g.stride, i)]) * v;
                hs[m] += static_cast<double>(b.V[at(a, g.stride, i)]) * v;
            }
        }
#pragma unroll
        for (int m = 0; m < kGramChunk; ++m) {
            for (int offset = 16; offset > 0; offset >>= 1) {
                gs[m] += __shfl_down_sync(0xffffffffu, gs[m], offset);
                hs[m] += __shfl_down_sync(0xffffffffu, hs[m], offset);
            }
        }
        __syncthreads(); // the previous chunk's parts are read
        if (lane == 0)
#pragma unroll
            for (int m = 0; m < kGramChunk; ++m) {
                parts[0][m][warp] = gs[m];
                parts[1][m][warp] = hs[m];
            }
        __syncthreads();
        if (t < 2 * kGramChunk && a0 + t % kGramChunk <= j) {
            const int m = t % kGramChunk, which = t / kGramChunk;
            double total = 0.0;
            for (unsigned w = 0; w < blockDim.x / 32; ++w)
                total += parts[which][m][w];
            (which == 0 ? rowG : rowH)[a0 + m] = total;
        }
    }
    __syncthreads();
    for (int a = t; a <= j; a += blockDim.x) {
        b.G[at(j, g.block, a)] = rowG[a];
        b.H[at(j, g.block, a)] = rowH[a];
    }
}

// The step in [begin, end) before which this stream checks its bounded trace, or -1, from its own count
// of samples since its last check (State::sinceCheck, as dsp::Rls counts); sinceCheck: the count after
// the launch. At most one check: the host's launches are no longer than the interval. Every thread reads
// the count before the launch's first barrier; one writes it back at the end (storeRecurrence).
__device__ int checkFor(const State& st, int begin, int end, int checkInterval, int& sinceCheck)
{
    sinceCheck = st.sinceCheck;
    int checkStep = -1;
    for (int j = begin; j < end; ++j)
        if (++sinceCheck > checkInterval) {
            sinceCheck = 1;
            checkStep = j;
        }
    return checkStep;
}

// What a recurrence launch leaves for the next launch and for the block's end (one thread writes it).
__device__ void storeRecurrence(State* st, double mu, double lambdaNow, int restartDue, unsigned long long paused,
                                unsigned long long reinits, int sinceCheck)
{
    st->sinceCheck = sinceCheck;
    st->mu = mu;
    st->lambdaNow = lambdaNow;
    st->restartDue = restartDue;
    st->pausedSamples += paused;
    st->reinitialisations += reinits;
}

__device__ double lowerAt(const double* m, int k, int a, int c)
{
    return a >= c ? m[at(a, k, c)] : m[at(c, k, a)];
}

// The per-step recurrence's per-step inputs and vectors in shared memory (A, G and H stay in global
// memory: it runs only past eliminationKernel's k).
std::size_t recurrenceSharedBytes(int k)
{
    return (6 * static_cast<std::size_t>(k) + kThreads / 32) * sizeof(double);
}

// One block of kThreads; the k-step recurrence of dsp::BlockRls::step, in float64, for k above
// eliminationKernel's. A is symmetric, so (A g)_a is read down column a (consecutive threads,
// consecutive addresses).
__global__ void recurrenceKernel(Geometry g, Buffers all, int begin, int end, int checkInterval, double lambda, float* out)
{
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (isHeld(b))
        return;
    out += blockIdx.z * g.callPitch;
    extern __shared__ double sharedD[];
    const int k = g.block;
    const std::size_t kk = static_cast<std::size_t>(k);
    double* A = b.A;
    const double* G = b.G;
    const double* H = b.H;
    double* tail = sharedD;
    double* gs = tail;
    double* cs = tail + kk;
    double* bv = tail + 2 * kk;
    double* sv = tail + 3 * kk;
    double* dy = tail + 4 * kk;       // d_j - y0_j
    double* held = tail + 5 * kk;     // 1: paused
    double* scratch = tail + 6 * kk;
    const int t = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
    State* st = b.state;
    int sinceCheck = 0;
    const int checkStep = checkFor(*st, begin, end, checkInterval, sinceCheck);
    const double traceBound = static_cast<double>(g.taps) / st->delta;
    const bool fresh = begin == 0; // a new block: the deferred update was applied by startBlock
    if (fresh)
        for (int i = t; i < k * k; i += threads) {
            A[i] = 0.0;
            b.C[i] = 0.0;
        }
    for (int i = t; i < k; i += threads) {
        bv[i] = fresh ? 0.0 : b.b[i];
        sv[i] = fresh ? 0.0 : b.s[i];
        dy[i] = b.d[i] - b.y0[i];
        held[i] = b.paused[i] ? 1.0 : 0.0;
    }
    if (fresh && t == 0) {
        st->mu = 1.0;
        st->pending = 0;
        st->reinitP = 0;
    }
    __syncthreads();
    double mu = st->mu, lambdaNow = st->lambdaNow;
    int restartDue = st->restartDue;
    unsigned long long paused = 0, reinits = 0;
    for (int j = begin; j < end; ++j) {
        if (j == checkStep) { // trace(P_{j-1}) = mu (trace(P0) - sum_{l<j} s_l c_l^T H c_l)
            double q = 0.0;
            for (int l = t; l < j; l += threads) {
                const double sl = sv[l];
                if (!(sl > 0.0))
                    continue;
                const double* c = b.C + at(l, k, 0);
                double quad = 0.0;
                for (int a = 0; a <= l; ++a) {
                    double row = 0.0;
                    for (int m = 0; m <= l; ++m)
                        row += lowerAt(H, k, a, m) * c[m];
                    quad += c[a] * row;
                }
                q += sl * quad;
            }
            q = blockSum(q, scratch);
            const double traceP0 = blockTrace(g, b, scratch);
            lambdaNow = mu * (traceP0 - q) > traceBound ? 1.0 : lambda;
        }
        for (int a = t; a <= j; a += threads)
            gs[a] = G[at(j, k, a)];
        __syncthreads();
        double part = 0.0;
        for (int a = t; a < j; a += threads)
            part += bv[a] * gs[a];
        const double e = dy[j] - blockSum(part, scratch);
        if (held[j] != 0.0 || restartDue) {
            ++paused;
            if (t == 0)
                out[j - begin] = static_cast<float>(e);
            continue;
        }
        for (int a = t; a < j; a += threads) {
            double sum = 0.0;
            for (int c = 0; c < j; ++c)
                sum += A[at(c, k, a)] * gs[c];
            cs[a] = -mu * sum;
        }
        if (t == 0)
            cs[j] = mu;
        __syncthreads();
        part = 0.0;
        for (int a = t; a <= j; a += threads)
            part += gs[a] * cs[a];
        const double alpha = lambdaNow + blockSum(part, scratch);
        if (!(alpha >= 0.5 * lambdaNow) || !isfinite(alpha) || !isfinite(e)) {
            restartDue = 1;
            ++reinits;
            if (!isfinite(e)) {
                for (int a = t; a < k; a += threads)
                    bv[a] = 0.0;
                for (int a = j + t; a < k; a += threads) {
                    b.y0[a] = 0.0;
                    dy[a] = b.d[a];
                }
            }
            if (t == 0) {
                if (!isfinite(e))
                    st->zeroW = 1;
                out[j - begin] = static_cast<float>(isfinite(e) ? e : b.d[j]);
            }
            __syncthreads();
            continue;
        }
        const double r = 1.0 / alpha, er = e * r, s = r / mu;
        for (int a = t; a <= j; a += threads) {
            bv[a] += cs[a] * er;
            b.C[at(j, k, a)] = cs[a];
        }
        const int side = j + 1;
        for (int i = t; i < side * side; i += threads) {
            const int a = i / side, c = i - a * side;
            A[at(a, k, c)] += s * cs[a] * cs[c];
        }
        if (t == 0) {
            sv[j] = s;
            out[j - begin] = static_cast<float>(e);
        }
        mu /= lambdaNow;
        __syncthreads();
    }
    for (int i = t; i < k; i += threads) {
        b.b[i] = bv[i];
        b.s[i] = sv[i];
    }
    if (t == 0)
        storeRecurrence(st, mu, lambdaNow, restartDue, paused, reinits, sinceCheck);
}

// Up to this k the recurrence is eliminationKernel's (M and L^-1 in shared memory); past it,
// recurrenceKernel's.
constexpr int kEliminationBlock = 64;
constexpr int kEliminationThreads = 256;
// Elements of the lower triangle per thread for a k: k (k + 1) / 2 over the threads, rounded up (9 at
// k = 64). The kernel is compiled for a few counts, and a k runs with the smallest that holds it: the
// step's cost is its instructions per element, so k = 32 (3) must not pay for 9.
constexpr int eliminationElements(int k) { return (k * (k + 1) / 2 + kEliminationThreads - 1) / kEliminationThreads; }

std::size_t eliminationSharedBytes(int k)
{
    const std::size_t kk = static_cast<std::size_t>(k);
    return (2 * kk * (kk + 1) + 5 * kk + kEliminationThreads / 32) * sizeof(double);
}

// The block's recurrence as an LDL^T elimination (Kernels/rls/NOTES.md, run 14, derives it). With
// Lambda_j the product of the forgetting factors of the steps that adapted up to j, the block's steps
// solve M = diag(Lambda) + G = L Delta L^T: the a priori errors are e = L^-1 (d - y0), computed as the
// elimination goes (e_j is r_j once the pivots before j are applied), and after the block
//     w = w0 + V b, b = sum_p e_p / Delta_p (L^-1)_p,   P = (P0 - sum_p (1 / Delta_p) (V (L^-1)_p^T)(...)^T) / Lambda
// which is what finishBlock applies with C's rows = rows of L^-1 and s_p = 1 / Delta_p. A step that does
// not adapt (paused, or after a restart) is eliminated against but never pivots. The per-sample
// recursion's alpha_j = lambda_j + u_j^T P_{j-1} u_j is lambda_j + S_j / Lambda_{j-1} with S_j the pivot
// before the diagonal is added, so its definiteness check carries over unchanged.
//
// A step costs one barrier and one shared-memory latency: each thread updates its own elements (l =
// M_ap / Delta_p computed where it is used), against recurrenceKernel's seven barriers and two block
// sums. Every launch replays the block from its first step (a call that splits a block re-does the
// earlier steps, with the forgetting factors they used kept in stepLambda): every quantity has one
// order of operations whatever the split, so the outputs are bit-identical across splits of the same k.
template <int kEliminationElements>
__global__ void __launch_bounds__(kEliminationThreads, 1) eliminationKernel(Geometry g, Buffers all, int begin, int end, int checkInterval,
                                                                         double lambda, float* out)
{
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (isHeld(b))
        return;
    out += blockIdx.z * g.callPitch;
    extern __shared__ double sharedD[];
    const int k = g.block, t = static_cast<int>(threadIdx.x), warp = t >> 5, lane = t & 31;
    constexpr int warps = kEliminationThreads / 32;
    const std::size_t kk = static_cast<std::size_t>(k);
    // M and Y have rows of k + 1: a step reads a column of M, which with rows of k doubles (k a multiple
    // of 16) would fall in one bank.
    const int ks = k + 1;
    double* M = sharedD;                  // row a, column c <= a: G, then the partly eliminated M
    double* Y = M + kk * (kk + 1);        // row a: L^-1's row a as the elimination builds it
    double* r = Y + kk * (kk + 1);        // d - y0, then eliminated: r_j = e_j at step j
    double* sv = r + kk;        // 1 / Delta_p of the pivots, else 0
    double* ev = sv + kk;       // e_p
    double* lam = ev + kk;      // the forgetting factor of each replayed step
    double* held = lam + kk;    // 1: the step does not adapt (paused)
    double* scratch = held + kk; // one per warp (blockSum's, at a trace check)
    State* st = b.state;
    int sinceCheck = 0;
    const int checkStep = checkFor(*st, begin, end, checkInterval, sinceCheck);
    const double traceBound = static_cast<double>(g.taps) / st->delta;
    for (int i = t; i < end * k; i += kEliminationThreads) {
        const int a = i / k, c = i - a * k;
        M[a * ks + c] = c <= a ? b.G[i] : 0.0;
        Y[a * ks + c] = a == c ? 1.0 : 0.0;
    }
    for (int i = t; i < k; i += kEliminationThreads) {
        r[i] = i < end ? b.d[i] - b.y0[i] : 0.0;
        sv[i] = 0.0;
        ev[i] = 0.0;
        lam[i] = i < begin ? b.stepLambda[i] : 0.0;
        held[i] = i < end && b.paused[i] ? 1.0 : 0.0;
    }
    if (begin == 0 && t == 0) {
        st->pending = 0;
        st->reinitP = 0;
    }
    double lambdaNow = begin == 0 ? st->lambdaNow : b.stepLambda[begin - 1];
    __syncthreads();
    // This thread's elements of the lower triangle (rows < end), as (a << 8) | c (0 and not valid for
    // none): element i = t + m x threads in row-major order.
    int own[kEliminationElements];
    bool valid[kEliminationElements];
#pragma unroll
    for (int m = 0; m < kEliminationElements; ++m) {
        const int i = t + m * kEliminationThreads;
        int a = static_cast<int>((sqrt(8.0 * i + 1.0) - 1.0) / 2.0);
        while (a * (a + 1) / 2 > i)
            --a;
        while ((a + 1) * (a + 2) / 2 <= i)
            ++a;
        const int c = i - a * (a + 1) / 2;
        valid[m] = a < end;
        own[m] = valid[m] ? (a << 8) | c : 0;
    }
    double mu = 1.0; // 1 / Lambda of the steps so far
    const double invLambda = 1.0 / lambda;
    int restartDue = 0, deadWeights = 0, deadFrom = end;
    unsigned long long paused = 0, reinits = 0;
    for (int p = 0; p < end; ++p) {
        const bool replay = p < begin;
        if (replay) {
            lambdaNow = lam[p];
        } else {
            if (p == checkStep) { // trace(P_{p-1}) = mu (trace(P0) - sum_{m<p} s_m Y_m H Y_m^T); warp w takes rows m = w, w + warps, ..., lane l their terms a = l, l + 32, ...
                double q = 0.0;
                for (int m = warp; m < p; m += warps) {
                    if (!(sv[m] > 0.0))
                        continue;
                    const double* y = Y + m * ks;
                    for (int a = lane; a <= m; a += 32) {
                        double row = 0.0;
                        for (int c = 0; c <= m; ++c)
                            row += lowerAt(b.H, k, a, c) * y[c];
                        q += sv[m] * (y[a] * row);
                    }
                }
                const double total = blockSum(q, scratch);
                const double traceP0 = blockTrace(g, b, scratch);
                lambdaNow = mu * (traceP0 - total) > traceBound ? 1.0 : lambda;
            }
            if (t == 0)
                lam[p] = lambdaNow;
        }
        const double e = r[p];
        if (!replay && t == 0 && !deadWeights)
            out[p - begin] = static_cast<float>(e);
        if (held[p] != 0.0 || restartDue) {
            paused += replay ? 0 : 1;
            continue;
        }
        const double alpha = lambdaNow + M[p * ks + p] * mu;
        if (!(alpha >= 0.5 * lambdaNow) || !isfinite(alpha) || !isfinite(e)) {
            restartDue = 1;
            reinits += replay ? 0 : 1;
            if (!isfinite(e)) { // w = 0 from here: this step and the rest output the microphone
                deadWeights = 1;
                deadFrom = p;
                if (!replay && t == 0)
                    st->zeroW = 1;
            }
            continue;
        }
        // 1 / Delta = mu / alpha: the step's one division (a division is a long dependent sequence in
        // float64, and this chain is the kernel's critical path).
        const double invDelta = mu / alpha;
        if (t == 0) {
            sv[p] = invDelta;
            ev[p] = e;
        }
        // Rows a > p: l = M_ap / Delta; M_ac -= l M_cp (p < c <= a), Y_ac -= l Y_pc (c <= p), r_a -= l e.
        // Each thread owns fixed elements (a, c) of the lower triangle and r_t. Their updates read only
        // column p of M and row p of Y, which no update of this step writes, so all the loads are issued
        // first and the stores after: one latency per step instead of one per element.
        // Every load is unconditional (a dead element reads a valid address and drops it): a load under
        // a branch is not hoisted, and the step then pays a latency per element.
        double lp[kEliminationElements], src[kEliminationElements], old[kEliminationElements];
        int dst[kEliminationElements];
        bool live[kEliminationElements], inM[kEliminationElements];
#pragma unroll
        for (int m = 0; m < kEliminationElements; ++m) {
            const int a = own[m] >> 8, c = own[m] & 255;
            live[m] = valid[m] && a > p;
            inM[m] = c > p;
            dst[m] = a * ks + c;
            lp[m] = M[a * ks + p];
            src[m] = inM[m] ? M[c * ks + p] : Y[p * ks + c];
            old[m] = inM[m] ? M[dst[m]] : Y[dst[m]];
        }
        const bool ownR = t > p && t < end;
        const double lr = M[(ownR ? t : 0) * ks + p];
#pragma unroll
        for (int m = 0; m < kEliminationElements; ++m)
            if (live[m])
                (inM[m] ? M : Y)[dst[m]] = old[m] - (lp[m] * invDelta) * src[m];
        if (ownR)
            r[t] -= (lr * invDelta) * e;
        mu *= lambdaNow == 1.0 ? 1.0 : invLambda; // lambdaNow is lambda or 1
        __syncthreads();
    }
    __syncthreads();
    // b = sum_p e_p s_p Y_p (zero once the weights died), C's rows = Y's rows, s.
    for (int a = t; a < k; a += kEliminationThreads) {
        double sum = 0.0;
        if (!deadWeights)
            for (int p = a; p < end; ++p)
                sum += ev[p] * sv[p] * Y[p * ks + a];
        b.b[a] = sum;
        b.s[a] = sv[a];
    }
    for (int i = t; i < end * k; i += kEliminationThreads)
        b.C[i] = Y[(i / k) * ks + i % k];
    for (int p = max(begin, deadFrom) + t; p < end; p += kEliminationThreads)
        out[p - begin] = static_cast<float>(b.d[p]);
    for (int p = begin + t; p < end; p += kEliminationThreads)
        b.stepLambda[p] = lam[p];
    if (t == 0)
        storeRecurrence(st, mu, lambdaNow, restartDue, paused, reinits, sinceCheck);
}

// Thread (i, y): for y < steps the deferred update's z_y(i) = sqrt(s_y) (V c_y)_i, stored at the index
// of y among the steps that adapted; for y == steps (the last row of the grid) w0_i (+)= (V b)_i. With
// weightsOut, only w0 + V b into weightsOut (the grid has that one row).
__global__ void finishBlockKernel(Geometry g, Buffers all, int steps, bool restart, float* weightsOut)
{
    __shared__ int slot;
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (weightsOut == nullptr && isHeld(b))
        return;
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    const int y = static_cast<int>(blockIdx.y);
    const State& st = *b.state;
    if (weightsOut != nullptr || y == steps) {
        if (i >= g.taps)
            return;
        double w = st.zeroW ? 0.0 : static_cast<double>(b.w0[i]);
        for (int a = 0; a < steps; ++a)
            w += b.b[a] * static_cast<double>(b.V[at(a, g.stride, i)]);
        if (weightsOut != nullptr)
            weightsOut[i] = static_cast<float>(w);
        else
            b.w0[i] = static_cast<float>(w);
        return;
    }
    const double sl = b.s[y];
    if (restart || st.restartAsked || st.restartDue || !(sl > 0.0))
        return;
    if (threadIdx.x == 0) {
        int count = 0;
        for (int l = 0; l < y; ++l)
            count += b.s[l] > 0.0 ? 1 : 0;
        slot = count;
    }
    __syncthreads();
    if (i >= g.taps)
        return;
    const double* c = b.C + at(y, g.block, 0);
    double z = 0.0;
    for (int a = 0; a <= y; ++a)
        z += c[a] * static_cast<double>(b.V[at(a, g.stride, i)]);
    b.Z[at(slot, g.stride, i)] = static_cast<float>(sqrt(sl) * z);
}

// After finishBlockKernel has read them: the flags for the next block's start.
__global__ void finishFlagsKernel(Geometry g, Buffers all, int steps, bool restart)
{
    const Buffers b = streamBuffers(g, all, static_cast<int>(blockIdx.z));
    if (isHeld(b))
        return;
    State& st = *b.state;
    int count = 0;
    for (int l = 0; l < steps; ++l)
        count += b.s[l] > 0.0 ? 1 : 0;
    if (restart || st.restartAsked || st.restartDue) {
        st.reinitP = 1;
        st.pending = 0;
        st.pendingCount = 0;
    } else {
        st.pendingCount = count;
        st.pendingMu = static_cast<float>(st.mu);
        st.pending = (count > 0 || st.mu != 1.0) ? 1 : 0;
    }
    st.restartDue = 0;
    st.restartAsked = 0;
    st.zeroW = 0;
    st.mu = 1.0;
}

// Between blocks, the streams marked: P = I / delta at the next block's start (finishFlagsKernel's restart
// after a block of no steps; w0 stands, as the last block's end left it).
__global__ void restartStreamsKernel(Geometry g, Buffers all, const unsigned char* marked)
{
    if (!marked[blockIdx.z])
        return;
    State& st = *streamBuffers(g, all, static_cast<int>(blockIdx.z)).state;
    st.reinitP = 1;
    st.pending = 0;
    st.pendingCount = 0;
    st.restartDue = 0;
    st.restartAsked = 0;
    st.zeroW = 0;
    st.mu = 1.0;
}

// Block (x, channel, stream): a held stream's newest length - 1 samples of a channel, moved to where the
// next call looks for them.
__global__ void carryHeldHistoryKernel(Geometry g, const unsigned char* held, const float* from, std::size_t fromNewest, float* to,
                                       std::size_t count)
{
    if (!held[blockIdx.z])
        return;
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<std::size_t>(g.length - 1))
        return;
    const std::size_t row = (static_cast<std::size_t>(blockIdx.z) * static_cast<std::size_t>(g.channels) + blockIdx.y) * g.historyPitch;
    to[row + count + i] = from[row + fromNewest + i];
}

unsigned streams(const Geometry& g) { return static_cast<unsigned>(g.streams); }

unsigned blocksFor(std::size_t items, int threads) { return static_cast<unsigned>((items + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads)); }

} // namespace

int tiledVSplits(int taps, int k)
{
    return taps >= TiledVPolicy::minTaps && k >= TiledVPolicy::minBlock
               ? std::min(TiledVPolicy::maxSplits, (taps + TiledVPolicy::splitRange - 1) / TiledVPolicy::splitRange)
               : 0;
}

void buildColumns(const Geometry& g, const Buffers& b, const float* history, const float* mic, int t0, int begin, int end,
                  bool adapting, const unsigned char* streamAdapting, double silenceEnergy, cudaStream_t stream)
{
    buildColumnsKernel<<<dim3(static_cast<unsigned>(end - begin), 1, streams(g)), kThreads, 0, stream>>>(g, b, history, mic, t0, begin, adapting,
                                                                                    streamAdapting, silenceEnergy);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void startBlock(const Geometry& g, const Buffers& b, cudaStream_t stream)
{
    const unsigned tiles = static_cast<unsigned>(g.stride / kStartTile);
    const unsigned rowTiles = static_cast<unsigned>((g.taps + kStartTile - 1) / kStartTile);
    startBlockKernel<<<dim3(tiles, rowTiles, streams(g)), 256, 0, stream>>>(g, b);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void computeV(const Geometry& g, const Buffers& b, int begin, int end, cudaStream_t stream)
{
    // More rows per warp read U's tile less often (each row of P meets all of U), but leave fewer blocks:
    // one stream takes two rows from 2048 taps (below, most multiprocessors would hold one block, whose
    // loads nothing else overlaps) and four from 4096 (N = 4096: 256 blocks of four warps, two a
    // multiprocessor, and U read 256 times instead of 512); a batch whose streams give every multiprocessor
    // a few blocks even at four rows takes four (N = 512, 256 streams: U's reads fall from 8 to 2 MiB a
    // stream). Measured on an H200, 2026-11-27 (quell-bench blockrls, single stream, samples/s, two rows
    // -> four): N = 1024 550 k -> 516 k, 2048 402 k -> 387 k, 4096 163 k -> 181 k, 8192 52.1 k -> 61.0 k at
    // k = 32, the same pattern at k = 64. And one stream from 4096 taps takes eight warps a block, not
    // four: each tile of U staged in shared memory serves 32 rows (H100, 2026-11-28, one call, samples/s at
    // k = 32 / 64: N = 4096 200 k / 230 k -> 203 k / 236 k, 8192 73.4 k / 84.9 k -> 77.2 k / 90.6 k; at
    // 1024 and 2048 taps it lost 6 to 10 %, and V at 64 steps a pass, P read once per block of 64, lost
    // 5 to 45 % at k = 64: Kernels/rls/NOTES.md run 19). V is the same to the bit for every row kernel: a
    // (row, step)'s sum runs in one order whatever the rows per warp and the warps per block. Where the
    // geometry asks for GEMM tiles (TiledVPolicy: from 4096 taps at k > 32, every stream of a batch alike),
    // those sum instead, in their own fixed order (run 21).
    static const unsigned multiprocessors = [] {
        int device = 0, count = 0;
        QUELL_CUDA_CHECK(cudaGetDevice(&device));
        QUELL_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
        return static_cast<unsigned>(count);
    }();
    const std::size_t taps = static_cast<std::size_t>(g.taps);
    const unsigned fourRowBlocks = blocksFor(taps, kVWarps * 4);
    const int count = end - begin;
    if (g.vSplits > 0) {
        launchTiledV(g, b, begin, count, stream);
    } else if (g.streams == 1 && g.taps >= 4096)
        computeVKernel<4, 2 * kVWarps><<<dim3(blocksFor(taps, 2 * kVWarps * 4), 1, 1), 2 * kVWarps * 32, 0, stream>>>(g, b, begin, count);
    else if (g.streams > 1 && fourRowBlocks * streams(g) >= 4 * multiprocessors)
        computeVKernel<4><<<dim3(fourRowBlocks, 1, streams(g)), kVWarps * 32, 0, stream>>>(g, b, begin, count);
    else if (g.taps >= 2048)
        computeVKernel<2><<<dim3(blocksFor(taps, kVWarps * 2), 1, streams(g)), kVWarps * 32, 0, stream>>>(g, b, begin, count);
    else
        computeVKernel<1><<<dim3(blocksFor(taps, kVWarps), 1, streams(g)), kVWarps * 32, 0, stream>>>(g, b, begin, count);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void computeGram(const Geometry& g, const Buffers& b, int begin, int end, cudaStream_t stream)
{
    // A batch: a block per row (the same sums); one stream: a block per element, which spreads a long
    // filter's few rows over every multiprocessor.
    if (g.streams > 1) {
        computeGramRowsKernel<<<dim3(static_cast<unsigned>(end - begin), 1, streams(g)), kThreads, 0, stream>>>(g, b, begin);
        QUELL_CUDA_CHECK(cudaGetLastError());
        return;
    }
    computeGramKernel<<<dim3(static_cast<unsigned>(end - begin), static_cast<unsigned>(end), streams(g)), kThreads, 0, stream>>>(g, b, begin);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void recurrence(const Geometry& g, const Buffers& b, int begin, int end, int checkInterval, double lambda, float* out,
                cudaStream_t stream)
{
    static const bool attributeSet = [] {
        for (const void* kernel : {reinterpret_cast<const void*>(eliminationKernel<1>), reinterpret_cast<const void*>(eliminationKernel<3>),
                                   reinterpret_cast<const void*>(eliminationKernel<5>), reinterpret_cast<const void*>(eliminationKernel<9>)})
            QUELL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(eliminationSharedBytes(kEliminationBlock))));
        return true;
    }();
    (void)attributeSet;
    static_assert(eliminationElements(kEliminationBlock) == 9, "the largest instance below holds k = kEliminationBlock");
    const std::size_t smem = eliminationSharedBytes(g.block);
    const int elements = eliminationElements(g.block);
    if (elements <= 1)
        eliminationKernel<1><<<dim3(1, 1, streams(g)), kEliminationThreads, smem, stream>>>(g, b, begin, end, checkInterval, lambda, out);
    else if (elements <= 3)
        eliminationKernel<3><<<dim3(1, 1, streams(g)), kEliminationThreads, smem, stream>>>(g, b, begin, end, checkInterval, lambda, out);
    else if (elements <= 5)
        eliminationKernel<5><<<dim3(1, 1, streams(g)), kEliminationThreads, smem, stream>>>(g, b, begin, end, checkInterval, lambda, out);
    else if (g.block <= kEliminationBlock)
        eliminationKernel<9><<<dim3(1, 1, streams(g)), kEliminationThreads, smem, stream>>>(g, b, begin, end, checkInterval, lambda, out);
    else
        recurrenceKernel<<<dim3(1, 1, streams(g)), kThreads, recurrenceSharedBytes(g.block), stream>>>(g, b, begin, end, checkInterval, lambda, out);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void finishBlock(const Geometry& g, const Buffers& b, int steps, bool restart, cudaStream_t stream)
{
    const dim3 grid(blocksFor(static_cast<std::size_t>(g.taps), kThreads), static_cast<unsigned>(steps + 1), streams(g));
    finishBlockKernel<<<grid, kThreads, 0, stream>>>(g, b, steps, restart, nullptr);
    QUELL_CUDA_CHECK(cudaGetLastError());
    finishFlagsKernel<<<dim3(1, 1, streams(g)), 1, 0, stream>>>(g, b, steps, restart);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void restartStreams(const Geometry& g, const Buffers& b, const unsigned char* marked, cudaStream_t stream)
{
    restartStreamsKernel<<<dim3(1, 1, streams(g)), 1, 0, stream>>>(g, b, marked);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void carryHeldHistory(const Geometry& g, const unsigned char* held, const float* from, std::size_t fromNewest, float* to,
                      std::size_t count, cudaStream_t stream)
{
    if (g.length <= 1)
        return;
    const dim3 grid(blocksFor(static_cast<std::size_t>(g.length - 1), kThreads), static_cast<unsigned>(g.channels), streams(g));
    carryHeldHistoryKernel<<<grid, kThreads, 0, stream>>>(g, held, from, fromNewest, to, count);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void currentWeights(const Geometry& g, const Buffers& b, int streamIndex, int steps, float* out, cudaStream_t stream)
{
    // The one stream: its buffers as stream 0 of a grid of one.
    finishBlockKernel<<<blocksFor(static_cast<std::size_t>(g.taps), kThreads), kThreads, 0, stream>>>(g, streamBuffers(g, b, streamIndex),
                                                                                                      steps, false, out);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

} // namespace quell::gpu::blockrls
