// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Single-pass IIR scan after PLR (paper 004), for a "system" from IirSystems.cuh.
//
// A tile of B = THREADS * K samples per thread block; each thread owns K consecutive samples.
//  1. Feed-forward map over the thread's run (input halo from the tile in shared memory).
//  2. Local recurrence from zero state: the run's carry, i.e. its D-dimensional output state.
//  3. Merge carries: warp shuffles (Kogge-Stone) with precomputed correction matrices T_L (the
//     transition of the state over L samples of zero input: the n-nacci-like impulse responses of the
//     feedback part), then across warps in shared memory, then across thread blocks by decoupled look-back
//     (status flags + carried D-state per tile). Matrices that decayed below float precision are skipped,
//     and the look-back stops at the first predecessor whose influence has decayed away.
//  4. Recurrence again from the true incoming state (more accurate than adding corrections), store.
// All merges at one level combine chunks of equal length, so each level needs one matrix per distance.
#include <cuda/atomic>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "iir/IirSystems.cuh"

namespace quell::gpu::iir {

enum : unsigned { kInvalid = 0, kAggregate = 1, kInclusive = 2 };

// Layout of one coefficient set's matrix table (each D x D, row-major), for a kernel with W warps:
//   [0, 33)            T_{jK}  j = 0..32   (within a warp; j = lane)
//   [33, 33+W+1)       T_{32Kw} w = 0..W   (across warps)
//   [34+W, 34+W+33)    T_{jB}  j = 0..32   (across tiles, look-back distance j)
__host__ __device__ constexpr int laneMatrix(int j) { return j; }
__host__ __device__ constexpr int warpMatrix(int w) { return 33 + w; }
__host__ __device__ constexpr int tileMatrix(int warps, int j) { return 34 + warps + j; }
__host__ __device__ constexpr int matrixCount(int warps) { return 34 + warps + 33; }

template <typename Real>
struct ScanParams {
    const float* in;
    float* out;
    long long stride;        // floats between channels
    long long samples;       // per channel, this launch
    long long tilesPerChannel;
    long long channels;
    const int* channelSet;   // coefficient set per channel (nullptr: set 0)
    const Real* coeffs;      // per set: NCOEF values
    int coeffStride;
    const Real* mats;        // per set: matrixCount(W) * D * D
    long long matStride;
    const unsigned long long* matMask; // per set: bit j set if matrix j (lane/warp tables) is non-negligible
    const int* lookbackCut;  // per set: look-back distances >= cut have negligible influence (33: none)
    const Real* stateIn;     // per channel: HALO past inputs (x[-1-j]) then D state values
    Real* stateOut;
    int stateStride;
    unsigned long long* tickets; // persistent schedule: tile counter, zero at launch
    unsigned* flags;         // per tile: (epoch << 2) | status
    Real* aggregates;        // per tile: D values
    Real* inclusives;        // per tile: D values (multi-block apply: the state entering the tile)
    unsigned epoch;
    int vectorOk;            // warp-per-tile: in, out and stride allow 16-byte vector access
    int warpOpts;            // warp-per-tile experiments (kWarpOpt*), 0 by default
};

// acc += T v (T row-major D x D, uniform across the warp: broadcast loads through the read-only cache). Float32
// rows of 4 and 8 are read as 16-byte vectors: at state size 8 the scan is bound by load instructions.
template <int D, typename Real>
__device__ __forceinline__ void matVecAdd(const Real* __restrict__ t, const Real (&v)[D], Real (&acc)[D])
{
    constexpr bool f32 = sizeof(Real) == 4;
#pragma unroll
    for (int r = 0; r < D; ++r) {
        Real sum = acc[r];
        if constexpr (f32 && D % 4 == 0) {
#pragma unroll
            for (int c = 0; c < D; c += 4) {
                const float4 m = __ldg(reinterpret_cast<const float4*>(t + r * D + c));
                sum = fma(m.x, v[c], sum);
                sum = fma(m.y, v[c + 1], sum);
                sum = fma(m.z, v[c + 2], sum);
                sum = fma(m.w, v[c + 3], sum);
            }
        } else {
#pragma unroll
            for (int c = 0; c < D; ++c)
                sum = fma(__ldg(t + r * D + c), v[c], sum);
        }
        acc[r] = sum;
    }
}

// A run of K samples from zero state: its feed-forward part in w (the second pass reuses it) and its carry
// (the state it leaves) in s. xr holds the run's K inputs after the H before them.
template <class Sys, int K, typename Real>
__device__ __forceinline__ void zeroStateCarry(const Real (&c)[Sys::NCOEF], const Real (&xr)[K + Sys::HALO],
                                               Real (&w)[Sys::template WORK<K>], Real (&s)[Sys::D])
{
    Sys::template feedForward<K>(c, xr, w);
    Real y[K];
#pragma unroll
    for (int j = 0; j < Sys::D; ++j)
        s[j] = Real(0);
    Sys::template recur<K, false>(c, w, s, y, K);
}

// The recurrence over a lane's run from its true incoming state s, outputs in y. In the channel's last tile
// the run stops at the last valid sample (outputs past it are zero), and the lane holding that sample
// writes the channel's final state to stOut[H..H+D).
template <class Sys, int K, typename Real>
__device__ __forceinline__ void recurRun(const Real (&c)[Sys::NCOEF], const Real (&w)[Sys::template WORK<K>],
                                         Real (&s)[Sys::D], Real (&y)[K], bool lastTile, int valid, int first, Real* stOut)
{
    if (!lastTile) {
        Sys::template recur<K, false>(c, w, s, y, K);
        return;
    }
#pragma unroll
    for (int i = 0; i < K; ++i)
        y[i] = Real(0);
    Sys::template recur<K, true>(c, w, s, y, valid - first);
    if (first <= valid - 1 && valid - 1 < first + K) {
#pragma unroll
        for (int j = 0; j < Sys::D; ++j)
            stOut[Sys::HALO + j] = s[j];
    }
}

// Kogge-Stone inclusive scan of carries over the first LANES lanes of a warp: afterwards lane i holds
// sum over l <= i of T^(i-l) carry(l), with T^d the transition over d lanes' runs (ACROSS_WARPS: over d
// warps' runs), skipped where the mask says it decayed below precision.
template <int D, int LANES, bool ACROSS_WARPS, typename Real>
__device__ __forceinline__ void warpScanCarries(Real (&s)[D], const Real* mats, unsigned long long mask, int lane)
{
#pragma unroll
    for (int d = 1; d < LANES; d <<= 1) {
        const int m = ACROSS_WARPS ? warpMatrix(d) : laneMatrix(d);
        Real r[D];
#pragma unroll
        for (int j = 0; j < D; ++j)
            r[j] = __shfl_up_sync(0xffffffffu, s[j], d);
        if (lane >= d && (mask >> m & 1ull))
            matVecAdd<D>(mats + m * D * D, r, s);
    }
}

__device__ __forceinline__ int padIndex(int i) { return i + (i >> 5); }

template <typename Real>
__device__ __forceinline__ void publish(unsigned* flag, Real* slot, const Real* values, int d, unsigned word)
{
    for (int j = 0; j < d; ++j)
        __stcg(slot + j, values[j]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(*flag);
    f.store(word, cuda::memory_order_release);
}

// Decoupled look-back by warp 0 of the block: lane j inspects the tile j+1 places back. Returns (in every
// lane) the state entering this tile.
template <int D, int WARPS, typename Real>
__device__ void lookBack(const ScanParams<Real>& p, long long ticket, long long tile, const Real* mats,
                         int cut, const Real (&init)[D], Real (&prefix)[D])
{
    const int lane = threadIdx.x & 31;
    const long long q = tile - 1 - lane; // predecessor tile within the channel (-1: the initial state)
    constexpr unsigned kTerminal = 3;    // inclusive-like: the initial state, or influence decayed away
    for (int spins = 0;; ++spins) {
        unsigned status;
        if (lane >= cut || q < -1) {
            status = kTerminal + 1; // contributes nothing, stops the look-back
        } else if (q == -1) {
            status = kTerminal;
        } else {
            cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(p.flags[ticket - 1 - lane]);
            const unsigned word = f.load(cuda::memory_order_acquire);
            status = (word >> 2) == p.epoch ? (word & 3u) : kInvalid;
        }
        const unsigned stopMask = __ballot_sync(0xffffffffu, status >= kInclusive);
        if (stopMask == 0) {
            __nanosleep(32);
            continue;
        }
        const int first = __ffs(stopMask) - 1;
        const unsigned upTo = first == 31 ? 0xffffffffu : ((2u << first) - 1u);
        const unsigned invalid = __ballot_sync(0xffffffffu, status == kInvalid) & upTo;
        if (invalid != 0) {
            if (spins > 4)
                __nanosleep(32);
            continue;
        }
        Real v[D], acc[D];
#pragma unroll
        for (int j = 0; j < D; ++j) {
            v[j] = Real(0);
            acc[j] = Real(0);
        }
        if (lane <= first) {
            const long long slot = (ticket - 1 - lane) * D;
            if (status == kAggregate) {
#pragma unroll
                for (int j = 0; j < D; ++j)
                    v[j] = __ldcg(p.aggregates + slot + j);
            } else if (status == kInclusive) {
#pragma unroll
                for (int j = 0; j < D; ++j)
                    v[j] = __ldcg(p.inclusives + slot + j);
            } else if (status == kTerminal) {
#pragma unroll
                for (int j = 0; j < D; ++j)
                    v[j] = init[j];
            }
            if (status != kTerminal + 1)
                matVecAdd<D>(mats + tileMatrix(WARPS, lane) * D * D, v, acc);
        }
#pragma unroll
        for (int j = 0; j < D; ++j) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], o);
            prefix[j] = acc[j];
        }
        return;
    }
}

// Where a tile lies: its channel, its index within the channel and its valid samples.
template <int B, typename Real>
struct TileInfo {
    long long ticket, channel, tileIdx, start;
    int valid;
    bool lastTile;
    __device__ TileInfo(const ScanParams<Real>& p, long long t)
        : ticket(t), channel(t / p.tilesPerChannel), tileIdx(t - channel * p.tilesPerChannel), start(tileIdx * B),
          valid(static_cast<int>(min(static_cast<long long>(B), p.samples - start))),
          lastTile(tileIdx == p.tilesPerChannel - 1)
    {
    }
};

// Starts copying a tile and its input halo into shared memory (asynchronous copies, striped so each warp
// reads 128 contiguous bytes), zero beyond the valid samples. Commits one copy group.
template <int H, int K, int THREADS, typename Real>
__device__ __forceinline__ void startTileLoad(const ScanParams<Real>& p, const TileInfo<THREADS * K, Real>& t,
                                              float* tile)
{
    const float* x = p.in + t.channel * p.stride;
    if (threadIdx.x < H) {
        const long long n = t.start - H + threadIdx.x;
        if (n >= 0)
            __pipeline_memcpy_async(tile + padIndex(threadIdx.x), x + n, sizeof(float));
        else
            tile[padIndex(threadIdx.x)] = static_cast<float>(p.stateIn[t.channel * p.stateStride - 1 - n]);
    }
#pragma unroll
    for (int i = 0; i < K; ++i) {
        const int l = i * THREADS + threadIdx.x;
        if (l < t.valid)
            __pipeline_memcpy_async(tile + padIndex(H + l), x + t.start + l, sizeof(float));
        else
            tile[padIndex(H + l)] = 0.0f;
    }
    __pipeline_commit();
}

// What a tile pass does: the single-pass scan (look-back), or one of the two data passes of paper 000's
// multi-block algorithm (IirMultiBlockKernels.cuh): Reduce writes the tile's zero-state carry and stops,
// Apply takes the state entering the tile from `inclusives` and filters.
enum class TilePass { Scan, Reduce, Apply };

// Filters one tile whose inputs are in shared memory (`tile`, which then stages the outputs).
template <class Sys, int K, int THREADS, typename Real, TilePass PASS = TilePass::Scan>
__device__ __forceinline__ void processTile(const ScanParams<Real>& p, const TileInfo<THREADS * K, Real>& t,
                                            float* tile, Real (*warpAgg)[Sys::D], Real (*warpPrefix)[Sys::D])
{
    constexpr int D = Sys::D;
    constexpr int H = Sys::HALO;
    constexpr int WARPS = THREADS / 32;
    const long long ticket = t.ticket, channel = t.channel, tileIdx = t.tileIdx, start = t.start;
    const int valid = t.valid;
    const bool lastTile = t.lastTile;
    const float* x = p.in + channel * p.stride;
    const Real* stIn = p.stateIn + channel * p.stateStride;
    const int set = p.channelSet != nullptr ? p.channelSet[channel] : 0;
    const Real* mats = p.mats + set * p.matStride;
    const unsigned long long mask = p.matMask[set];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;

    Real c[Sys::NCOEF];
#pragma unroll
    for (int i = 0; i < Sys::NCOEF; ++i)
        c[i] = __ldg(p.coeffs + set * p.coeffStride + i);
    Real xr[K + H];
#pragma unroll
    for (int i = 0; i < K + H; ++i)
        xr[i] = static_cast<Real>(tile[padIndex(threadIdx.x * K + i)]);

    // Zero-state pass: the run's carry, then the inclusive scan of carries within the warp.
    Real w[Sys::template WORK<K>], s[D], y[K];
    zeroStateCarry<Sys, K>(c, xr, w, s);
    warpScanCarries<D, 32, false>(s, mats, mask, lane);
    Real e[D]; // exclusive within the warp
#pragma unroll
    for (int j = 0; j < D; ++j) {
        e[j] = __shfl_up_sync(0xffffffffu, s[j], 1);
        if (lane == 0)
            e[j] = Real(0);
    }
    if (lane == 31) {
#pragma unroll
        for (int j = 0; j < D; ++j)
            warpAgg[warp][j] = s[j];
    }
    __syncthreads();

    if (warp == 0) {
        // Scan of the warp aggregates (lanes < WARPS), then the block's aggregate.
        Real a[D];
#pragma unroll
        for (int j = 0; j < D; ++j)
            a[j] = lane < WARPS ? warpAgg[lane][j] : Real(0);
        warpScanCarries<D, WARPS, true>(a, mats, mask, lane);
        Real blockAgg[D], warpExcl[D];
#pragma unroll
        for (int j = 0; j < D; ++j) {
            blockAgg[j] = __shfl_sync(0xffffffffu, a[j], WARPS - 1);
            warpExcl[j] = __shfl_up_sync(0xffffffffu, a[j], 1);
            if (lane == 0)
                warpExcl[j] = Real(0);
        }

        Real init[D], prefix[D];
#pragma unroll
        for (int j = 0; j < D; ++j)
            init[j] = stIn[H + j];
        if constexpr (PASS == TilePass::Reduce) {
            if (lane == 0) {
#pragma unroll
                for (int j = 0; j < D; ++j)
                    p.aggregates[ticket * D + j] = blockAgg[j];
            }
        } else if constexpr (PASS == TilePass::Apply) {
#pragma unroll
            for (int j = 0; j < D; ++j)
                prefix[j] = p.inclusives[ticket * D + j];
        } else if (tileIdx == 0) {
#pragma unroll
            for (int j = 0; j < D; ++j)
                prefix[j] = init[j];
        } else {
            if (lane == 0)
                publish(p.flags + ticket, p.aggregates + ticket * D, blockAgg, D, (p.epoch << 2) | kAggregate);
            lookBack<D, WARPS>(p, ticket, tileIdx, mats, p.lookbackCut[set], init, prefix);
        }
        if (PASS == TilePass::Scan && !lastTile) {
            Real incl[D];
#pragma unroll
            for (int j = 0; j < D; ++j)
                incl[j] = blockAgg[j];
            matVecAdd<D>(mats + tileMatrix(WARPS, 1) * D * D, prefix, incl);
            if (lane == 0)
                publish(p.flags + ticket, p.inclusives + ticket * D, incl, D, (p.epoch << 2) | kInclusive);
        }
        // State entering each warp.
        if (PASS != TilePass::Reduce && lane < WARPS) {
            if (mask >> warpMatrix(lane) & 1ull)
                matVecAdd<D>(mats + warpMatrix(lane) * D * D, prefix, warpExcl);
#pragma unroll
            for (int j = 0; j < D; ++j)
                warpPrefix[lane][j] = warpExcl[j];
        }
    }
    __syncthreads();
    if constexpr (PASS != TilePass::Reduce) {
        // State entering this thread's run, then the recurrence again from it.
        {
            Real wp[D];
#pragma unroll
            for (int j = 0; j < D; ++j)
                wp[j] = warpPrefix[warp][j];
            if (mask >> laneMatrix(lane) & 1ull)
                matVecAdd<D>(mats + laneMatrix(lane) * D * D, wp, e);
        }
#pragma unroll
        for (int j = 0; j < D; ++j)
            s[j] = e[j];
        const int first = threadIdx.x * K;
        recurRun<Sys, K>(c, w, s, y, lastTile, valid, first, p.stateOut + channel * p.stateStride);
        if (lastTile && threadIdx.x < H) {
            const long long n = p.samples - 1 - threadIdx.x;
            p.stateOut[channel * p.stateStride + threadIdx.x] = n >= 0 ? static_cast<Real>(x[n]) : stIn[threadIdx.x - p.samples];
        }

        // Store through shared memory so the global writes are coalesced. Every thread has finished reading
        // its inputs from the tile (the barrier above), so the tile can be overwritten.
#pragma unroll
        for (int i = 0; i < K; ++i)
            tile[padIndex(H + first + i)] = static_cast<float>(y[i]);
        __syncthreads();
        float* out = p.out + channel * p.stride + start;
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const int l = i * THREADS + threadIdx.x;
            if (l < valid)
                __stcs(out + l, tile[padIndex(H + l)]);
        }
    }
}


// Float32 kernels are held to a register budget that keeps 3 or 4 blocks per SM resident: occupancy is
// what keeps enough loads in flight (the direct form of small order fits 64 registers without spilling).
template <class Sys, int THREADS, typename Real>
constexpr int minBlocksPerSm()
{
    if (sizeof(Real) != 4)
        return THREADS == 256 ? 3 : 2;
    return (THREADS == 256 && !Sys::kCascade) ? 4 : 3;
}

// Two schedules of the same tile work:
//  - one tile per block (PERSISTENT = false): tile = block index, as in CUB's single-pass scan (blocks are
//    dispatched in index order, so a tile only waits on tiles of blocks already running);
//  - persistent (PERSISTENT = true): as many blocks as the device holds at once, each claiming tiles in
//    order from an atomic counter two tiles ahead and copying its next tile into shared memory while it
//    filters the current one, so loads stay in flight through the scan, the look-back and the stores.
//    Tiles are only ever handed to running blocks, in order, so every tile a block waits on is held by a
//    running block: no deadlock even when other kernels share the device.
template <class Sys, int K, int THREADS, bool PERSISTENT, typename Real>
__global__ void __launch_bounds__(THREADS, (minBlocksPerSm<Sys, THREADS, Real>())) iirScanKernel(const ScanParams<Real> p)
{
    constexpr int D = Sys::D;
    constexpr int H = Sys::HALO;
    constexpr int B = THREADS * K;
    constexpr int WARPS = THREADS / 32;
    constexpr int TILE = H + B;
    constexpr int TILE_FLOATS = TILE + TILE / 32 + 1;
    __shared__ float tiles[PERSISTENT ? 2 : 1][TILE_FLOATS];
    __shared__ Real warpAgg[WARPS][D];
    __shared__ Real warpPrefix[WARPS][D];

    if constexpr (!PERSISTENT) {
        const TileInfo<B, Real> t(p, blockIdx.x);
        startTileLoad<H, K, THREADS>(p, t, tiles[0]);
        __pipeline_wait_prior(0);
        __syncthreads();
        processTile<Sys, K, THREADS>(p, t, tiles[0], warpAgg, warpPrefix);
    } else {
        const long long total = p.tilesPerChannel * p.channels;
        __shared__ long long claimed[2];
        if (threadIdx.x == 0) {
            claimed[0] = static_cast<long long>(atomicAdd(p.tickets, 1ull));
            claimed[1] = static_cast<long long>(atomicAdd(p.tickets, 1ull));
        }
        __syncthreads();
        long long cur = claimed[0], next = claimed[1];
        if (cur >= total)
            return;
        startTileLoad<H, K, THREADS>(p, TileInfo<B, Real>(p, cur), tiles[0]);
#pragma unroll 1
        for (int j = 0;; ++j) {
            unsigned long long pending = 0;
            if (threadIdx.x == 0 && next < total)
                pending = atomicAdd(p.tickets, 1ull); // consumed after this tile: its latency is hidden
            if (next < total) {
                startTileLoad<H, K, THREADS>(p, TileInfo<B, Real>(p, next), tiles[(j + 1) & 1]);
                __pipeline_wait_prior(1);
            } else {
                __pipeline_wait_prior(0);
            }
            __syncthreads();
            processTile<Sys, K, THREADS>(p, TileInfo<B, Real>(p, cur), tiles[j & 1], warpAgg, warpPrefix);
            if (threadIdx.x == 0)
                claimed[0] = next < total ? static_cast<long long>(pending) : total;
            __syncthreads(); // also: the buffer just used is refilled next iteration
            cur = next;
            next = claimed[0];
            if (cur >= total)
                break;
        }
    }
}

} // namespace quell::gpu::iir
