// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Warp-per-tile variant of the single-pass scan (IirScanKernel.cuh): each warp owns a tile of SUB sub-tiles
// of 32 * K samples and runs the whole PLR sequence alone: per sub-tile the map, the zero-state pass and the
// Kogge-Stone merge over its lanes; the sub-tile carries chained in registers; one decoupled look-back
// against the previous warp's tile; then per sub-tile the second pass and the store. No block barriers: a
// warp never waits for the slowest warp of its block, so the warps of an SM stay spread over the load, scan
// and store phases, and loads stay in flight while other warps compute or look back.
//
// The whole tile is copied to a per-warp staging buffer with 16-byte asynchronous copies at the start
// (coalesced, one float4 per lane per instruction, no registers held while in flight), read back as K
// consecutive samples per lane, and the outputs leave the same way with 16-byte streaming stores. The buffer
// is in float4 chunks with an XOR swizzle so that both the coalesced pattern (chunk = lane + 32 i) and the
// per-lane pattern (chunk = lane * K/4 + j) hit eight distinct 16-byte bank groups per quarter-warp.
#include "iir/IirScanKernel.cuh"

namespace quell::gpu::iir {

constexpr int kWarpTileWarpsPerBlock = 4;
// ScanParams::warpOpts, read by kernels built with OPTS: store each sub-tile as soon as its second pass is done
// (the stores leave while the warp filters the next sub-tile) instead of the whole tile at the end. Kernels
// built without OPTS keep the run-6 code: at state size 8 and in float64 the extra live values cost
// registers (H100, run 8: order 8 2% slower, float64 order 2 5% slower with the switch compiled in).
constexpr int kWarpOptEarlyStore = 1;

// Staging bytes of a block of W warps (dynamic shared memory: 4 sub-tiles of 32 samples per lane need 64 KB
// per 4-warp block).
template <int K, int SUB, int W = kWarpTileWarpsPerBlock>
constexpr int warpTileStageBytes() { return W * SUB * 32 * K * static_cast<int>(sizeof(float)); }
// Blocks of W warps that fit an SM's 227 KB of shared memory (1 KB of it reserved per block), at most 32.
template <int K, int SUB, int W>
constexpr int warpTileSmemBlocks()
{
    const int n = 232448 / (warpTileStageBytes<K, SUB, W>() + 1024);
    return n < 32 ? n : 32;
}

// Physical float4 slot of chunk c when each lane owns CP consecutive chunks (CP = 1, 2, 4 or 8).
template <int CP>
__device__ __forceinline__ int swizzleChunk(int c)
{
    static_assert(CP == 1 || CP == 2 || CP == 4 || CP == 8, "CP must be 1, 2, 4 or 8");
    return CP > 1 ? (c ^ ((c >> 3) & (CP - 1))) : c;
}

template <int CP>
__device__ __forceinline__ int swizzleFloat(int e)
{
    return (swizzleChunk<CP>(e >> 2) << 2) | (e & 3);
}

// Warp tiles are small, so an SM needs many resident warps. Register budgets of the measured shapes: float32
// with 2 sub-tiles 64 registers at state size 1 (8 blocks of 4 warps), 80 at 2 and 4 (6 blocks); with more
// sub-tiles (their carries stay in registers) 80 and 96; 4 sub-tiles of 32 samples per lane 168 (3 blocks,
// as many as 64 KB of staging per block allow); state size 8 with 32 samples per lane 168 (3 blocks).
// At state sizes 4 and 8 a few bytes spill (to L1).
template <class Sys, int K, int SUB, typename Real>
constexpr int warpTileMinBlocks4()
{
    if (sizeof(Real) != 4)
        return Sys::D <= 4 ? 4 : 2;
    if (Sys::D == 8)
        return K >= 32 ? 3 : 4;
    if (warpTileStageBytes<K, SUB>() >= 65536)
        return 3; // shared memory holds no more
    if (SUB > 2)
        return Sys::D == 1 ? 6 : 5;
    return Sys::D == 1 ? 8 : Sys::D <= 4 ? 6 : 4;
}
// The same register budget per warp for blocks of W warps, capped by shared memory.
template <class Sys, int K, int SUB, typename Real, int W>
constexpr int warpTileMinBlocks()
{
    const int regs = warpTileMinBlocks4<Sys, K, SUB, Real>() * kWarpTileWarpsPerBlock / W;
    const int smem = warpTileSmemBlocks<K, SUB, W>();
    return regs < smem ? regs : smem;
}

// cp.async.wait_group takes an immediate: n is a constant once the caller's loop is unrolled.
__device__ __forceinline__ void waitPrior(int n)
{
    switch (n) {
    case 0: __pipeline_wait_prior(0); break;
    case 1: __pipeline_wait_prior(1); break;
    case 2: __pipeline_wait_prior(2); break;
    case 3: __pipeline_wait_prior(3); break;
    case 4: __pipeline_wait_prior(4); break;
    case 5: __pipeline_wait_prior(5); break;
    case 6: __pipeline_wait_prior(6); break;
    default: __pipeline_wait_prior(7); break;
    }
}

// One lane's K inputs of sub-tile g (and the H before them) from the staging buffer, as Real.
template <int H, int K, int CP, typename Real>
__device__ __forceinline__ void readRun(const float* buf, int g, int lane, float halo, Real (&xr)[K + H])
{
    constexpr int B = 32 * K;
    const float4* buf4 = reinterpret_cast<const float4*>(buf);
    float own[K];
#pragma unroll
    for (int j = 0; j < CP; ++j) {
        const float4 v = buf4[swizzleChunk<CP>(g * (B / 4) + lane * CP + j)];
        own[4 * j] = v.x;
        own[4 * j + 1] = v.y;
        own[4 * j + 2] = v.z;
        own[4 * j + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < H; ++j) {
        // The previous lane's last H samples; lane 0 takes the tile's halo, or the previous sub-tile's end.
        const float prev = __shfl_up_sync(0xffffffffu, own[K - H + j], 1);
        const float edge = g == 0 ? __shfl_sync(0xffffffffu, halo, j) : buf[swizzleFloat<CP>(g * B - H + j)];
        xr[j] = static_cast<Real>(lane == 0 ? edge : prev);
    }
#pragma unroll
    for (int i = 0; i < K; ++i)
        xr[H + i] = static_cast<Real>(own[i]);
}

// Full tiles with aligned data move as 16-byte vectors; others (a channel's last tile, odd strides) by floats.
template <int TILE, typename Real>
__device__ __forceinline__ bool vectorTile(const ScanParams<Real>& p, const TileInfo<TILE, Real>& t)
{
    return p.vectorOk != 0 && t.valid == TILE;
}

// Starts the asynchronous copy of a full tile into the warp's staging buffer: one copy group per sub-tile
// (STAGED) or one for the whole tile.
template <int K, int SUB, bool STAGED, typename Real>
__device__ __forceinline__ void startWarpTileLoad(const ScanParams<Real>& p, const TileInfo<SUB * 32 * K, Real>& t, float* buf)
{
    constexpr int CP = K / 4;
    const int lane = threadIdx.x & 31;
    float4* buf4 = reinterpret_cast<float4*>(buf);
    const float4* src = reinterpret_cast<const float4*>(p.in + t.channel * p.stride + t.start);
#pragma unroll
    for (int g = 0; g < SUB; ++g) {
#pragma unroll
        for (int i = g * CP; i < (g + 1) * CP; ++i)
            __pipeline_memcpy_async(buf4 + swizzleChunk<CP>(lane + 32 * i), src + lane + 32 * i, sizeof(float4));
        if (STAGED || g == SUB - 1)
            __pipeline_commit();
    }
}

// Stores samples [from, to) of a filtered tile (to a multiple of 128) from the staging buffer.
template <int CP>
__device__ __forceinline__ void storeTileRange(float* out, const float* buf, int lane, bool vec, int valid, int from, int to)
{
    const float4* buf4 = reinterpret_cast<const float4*>(buf);
    if (vec) {
        float4* dst = reinterpret_cast<float4*>(out);
#pragma unroll
        for (int i = from / 128; i < to / 128; ++i)
            __stcs(dst + lane + 32 * i, buf4[swizzleChunk<CP>(lane + 32 * i)]);
    } else {
#pragma unroll
        for (int i = from / 32; i < to / 32; ++i) {
            const int el = lane + 32 * i;
            if (el < valid)
                __stcs(out + el, buf[swizzleFloat<CP>(el)]);
        }
    }
}

// How the filter waits for a vector tile's copies: all at once, or per sub-tile.
enum class TileWait { All, Staged };

// Tables: buildTransitionTables(a, D, K, SUB): lane matrices T_{jK}, "warp" matrices T_{32Kg} (sub-tile
// distances), tile matrices T_{j * SUB * 32K} (look-back distances).
// Filters one warp tile whose vector copies were started (startWarpTileLoad) or, for a float tile, loads it.
template <class Sys, int K, int SUB, TileWait WAIT, bool OPTS, typename Real>
__device__ __forceinline__ void filterWarpTile(const ScanParams<Real>& p, const TileInfo<SUB * 32 * K, Real>& t, float* buf)
{
    constexpr int D = Sys::D;
    constexpr int H = Sys::HALO;
    constexpr int B = 32 * K;      // sub-tile
    constexpr int TILE = SUB * B;
    constexpr int CP = K / 4;
    static_assert(K % 4 == 0 && H <= K, "K: whole float4 chunks per lane, halo within one lane's run");
    constexpr bool STAGED = WAIT == TileWait::Staged;

    const int lane = threadIdx.x & 31;
    const long long ticket = t.ticket;
    const long long channel = t.channel;
    const int valid = t.valid;
    const float* x = p.in + channel * p.stride;
    const Real* stIn = p.stateIn + channel * p.stateStride;
    float4* buf4 = reinterpret_cast<float4*>(buf);
    const bool vec = vectorTile(p, t);
    // The H inputs before the tile (lane j holds x[start - H + j]); before the channel: the carried state.
    float halo = 0.0f;
    if (lane < H) {
        const long long n = t.start - H + lane;
        halo = n >= 0 ? x[n] : static_cast<float>(stIn[-1 - n]);
    }
    const int set = p.channelSet != nullptr ? p.channelSet[channel] : 0;
    const Real* mats = p.mats + set * p.matStride;
    const unsigned long long mask = p.matMask[set];
    const int cut = p.lookbackCut[set];
    Real c[Sys::NCOEF];
#pragma unroll
    for (int i = 0; i < Sys::NCOEF; ++i)
        c[i] = __ldg(p.coeffs + set * p.coeffStride + i);
    Real init[D];
#pragma unroll
    for (int j = 0; j < D; ++j)
        init[j] = stIn[H + j];
    if (vec) {
        if (WAIT == TileWait::All)
            __pipeline_wait_prior(0);
    } else {
#pragma unroll
        for (int i = 0; i < TILE / 32; ++i) {
            const int e = lane + 32 * i;
            buf[swizzleFloat<CP>(e)] = e < valid ? x[t.start + e] : 0.0f;
        }
    }
    __syncwarp();

    // Pass 1 per sub-tile: zero-state carries, merged over the lanes; keep each lane's exclusive carry and
    // the sub-tile's aggregate.
    Real excl[SUB][D], subAgg[SUB][D];
#pragma unroll
    for (int g = 0; g < SUB; ++g) {
        if (STAGED && vec) {
            waitPrior(SUB - 1 - g);
            __syncwarp();
        }
        Real xr[K + H];
        readRun<H, K, CP>(buf, g, lane, halo, xr);
        Real w[Sys::template WORK<K>], s[D];
        zeroStateCarry<Sys, K>(c, xr, w, s);
        warpScanCarries<D, 32, false>(s, mats, mask, lane);
#pragma unroll
        for (int j = 0; j < D; ++j) {
            excl[g][j] = __shfl_up_sync(0xffffffffu, s[j], 1);
            if (lane == 0)
                excl[g][j] = Real(0);
            subAgg[g][j] = __shfl_sync(0xffffffffu, s[j], 31);
        }
    }
    const bool subStep = (mask >> warpMatrix(1) & 1ull) != 0; // T over one sub-tile is not negligible
    Real agg[D], prefix[D];
#pragma unroll
    for (int j = 0; j < D; ++j)
        agg[j] = subAgg[0][j];
#pragma unroll
    for (int g = 1; g < SUB; ++g) {
        Real a[D];
#pragma unroll
        for (int j = 0; j < D; ++j)
            a[j] = subAgg[g][j];
        if (subStep)
            matVecAdd<D>(mats + warpMatrix(1) * D * D, agg, a);
#pragma unroll
        for (int j = 0; j < D; ++j)
            agg[j] = a[j];
    }
    if (t.tileIdx == 0) {
#pragma unroll
        for (int j = 0; j < D; ++j)
            prefix[j] = init[j];
    } else {
        if (lane == 0)
            publish(p.flags + ticket, p.aggregates + ticket * D, agg, D, (p.epoch << 2) | kAggregate);
        lookBack<D, SUB>(p, ticket, t.tileIdx, mats, cut, init, prefix);
    }
    // With a cut of 1 the next tile reads only this tile's aggregate (what entered this tile has decayed
    // below float precision over one tile), so the inclusive state is published only where it is read: by
    // longer look-backs, and from a channel's first tile, which publishes no aggregate.
    if (!t.lastTile && (t.tileIdx == 0 || cut > 1)) {
        matVecAdd<D>(mats + tileMatrix(SUB, 1) * D * D, prefix, agg);
        if (lane == 0)
            publish(p.flags + ticket, p.inclusives + ticket * D, agg, D, (p.epoch << 2) | kInclusive);
    }

    // The state entering each sub-tile.
    Real entering[SUB][D];
#pragma unroll
    for (int j = 0; j < D; ++j)
        entering[0][j] = prefix[j];
#pragma unroll
    for (int g = 1; g < SUB; ++g) {
#pragma unroll
        for (int j = 0; j < D; ++j)
            entering[g][j] = subAgg[g - 1][j];
        if (subStep)
            matVecAdd<D>(mats + warpMatrix(1) * D * D, entering[g - 1], entering[g]);
    }

    if constexpr (OPTS) {
        if (t.lastTile && lane < H) {
            const long long n = p.samples - 1 - lane;
            p.stateOut[channel * p.stateStride + lane] = n >= 0 ? static_cast<Real>(x[n]) : stIn[lane - p.samples];
        }
    }
    const bool early = OPTS && (p.warpOpts & kWarpOptEarlyStore) != 0;
    // Pass 2 per sub-tile, from the true incoming state; outputs replace the inputs in the staging buffer
    // (each lane overwrites only the chunks it read itself). Last sub-tile first: a sub-tile's lane 0 reads
    // the previous sub-tile's last inputs, which must not have been overwritten yet.
#pragma unroll
    for (int g = SUB - 1; g >= 0; --g) {
        Real xr[K + H];
        readRun<H, K, CP>(buf, g, lane, halo, xr);
        Real w[Sys::template WORK<K>];
        Sys::template feedForward<K>(c, xr, w);
        Real s[D], y[K];
#pragma unroll
        for (int j = 0; j < D; ++j)
            s[j] = excl[g][j];
        if (mask >> laneMatrix(lane) & 1ull)
            matVecAdd<D>(mats + laneMatrix(lane) * D * D, entering[g], s);
        recurRun<Sys, K>(c, w, s, y, t.lastTile, valid, g * B + lane * K, p.stateOut + channel * p.stateStride);
#pragma unroll
        for (int j = 0; j < CP; ++j)
            buf4[swizzleChunk<CP>(g * (B / 4) + lane * CP + j)] =
                make_float4(static_cast<float>(y[4 * j]), static_cast<float>(y[4 * j + 1]), static_cast<float>(y[4 * j + 2]),
                            static_cast<float>(y[4 * j + 3]));
        __syncwarp();
        if (early)
            storeTileRange<CP>(p.out + channel * p.stride + t.start, buf, lane, vec, valid, g * B, (g + 1) * B);
    }
    if constexpr (!OPTS) {
        if (t.lastTile && lane < H) {
            const long long n = p.samples - 1 - lane;
            p.stateOut[channel * p.stateStride + lane] = n >= 0 ? static_cast<Real>(x[n]) : stIn[lane - p.samples];
        }
    }
    __syncwarp();
    if (early)
        return;
    float* out = p.out + channel * p.stride + t.start;
    if (vec) {
        float4* dst = reinterpret_cast<float4*>(out);
#pragma unroll
        for (int i = 0; i < TILE / 128; ++i)
            __stcs(dst + lane + 32 * i, buf4[swizzleChunk<CP>(lane + 32 * i)]);
    } else {
#pragma unroll
        for (int i = 0; i < TILE / 32; ++i) {
            const int el = lane + 32 * i;
            if (el < valid)
                __stcs(out + el, buf[swizzleFloat<CP>(el)]);
        }
    }
}

// A warp per tile, tile = global warp index (blocks start in index order, so a tile only waits on tiles of
// warps already running). STAGED: one copy group per sub-tile, so the first sub-tile is filtered while the
// later ones arrive. OPTS: reads ScanParams::warpOpts, staging in dynamic shared memory
// (warpTileStageBytes<K, SUB, W>()); otherwise static (at most 48 KB).
template <class Sys, int K, int SUB, bool STAGED, typename Real, int W = kWarpTileWarpsPerBlock, bool OPTS = false>
__global__ void __launch_bounds__(32 * W, (warpTileMinBlocks<Sys, K, SUB, Real, W>()))
    iirWarpScanKernel(const ScanParams<Real> p)
{
    constexpr int TILE = SUB * 32 * K;
    static_assert(OPTS || warpTileStageBytes<K, SUB, W>() <= 48 * 1024, "static staging is at most 48 KB");
    const long long ticket = static_cast<long long>(blockIdx.x) * W + (threadIdx.x >> 5);
    if (ticket >= p.tilesPerChannel * p.channels)
        return; // a whole warp: nothing synchronises more than one warp
    const TileInfo<TILE, Real> t(p, ticket);
    float* buf;
    if constexpr (OPTS) {
        extern __shared__ float4 stage4[];
        buf = reinterpret_cast<float*>(stage4) + (threadIdx.x >> 5) * TILE;
    } else {
        __shared__ __align__(16) float stage[W][TILE];
        buf = stage[threadIdx.x >> 5];
    }
    if (vectorTile(p, t))
        startWarpTileLoad<K, SUB, STAGED>(p, t, buf);
    filterWarpTile<Sys, K, SUB, STAGED ? TileWait::Staged : TileWait::All, OPTS>(p, t, buf);
}

} // namespace quell::gpu::iir
