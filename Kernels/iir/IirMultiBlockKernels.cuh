// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Paper 000 (Lee & Sung): multi-block processing with the fast look-ahead, as a second strategy beside the
// single-pass scan. Three launches:
//  1. particular solutions: every tile filtered from zero state, its carry (the state after the tile)
//     written out; within the tile the threads' carries are merged by recursive doubling (the tile pass of
//     IirScanKernel.cuh in Reduce mode);
//  2. fast look-ahead: one block per channel turns the carries into the state entering every tile:
//     a sequential run over a few tiles per thread, then recursive doubling across the threads with the
//     transitions T_{B 2^k} (log2 of the thread count steps);
//  3. complete solutions: every tile filtered again from its true incoming state (Apply mode), stored.
// It reads the input twice (12 bytes per sample instead of 8), so on long signals it can reach at most two
// thirds of copy bandwidth; it needs no flags and no inter-block waiting.
#include "iir/IirScanKernel.cuh"

namespace quell::gpu::iir {

constexpr int kLookAheadThreads = 256;
constexpr int kDoublingMatrices = 40; // T_{B 2^k}, k = 0..39

template <class Sys, int K, int THREADS, typename Real, TilePass PASS>
__global__ void __launch_bounds__(THREADS, (minBlocksPerSm<Sys, THREADS, Real>())) iirTilePassKernel(const ScanParams<Real> p)
{
    constexpr int H = Sys::HALO;
    constexpr int B = THREADS * K;
    constexpr int TILE = H + B;
    constexpr int TILE_FLOATS = TILE + TILE / 32 + 1;
    __shared__ float tile[TILE_FLOATS];
    __shared__ Real warpAgg[THREADS / 32][Sys::D];
    __shared__ Real warpPrefix[THREADS / 32][Sys::D];
    const TileInfo<B, Real> t(p, blockIdx.x);
    startTileLoad<H, K, THREADS>(p, t, tile);
    __pipeline_wait_prior(0);
    __syncthreads();
    processTile<Sys, K, THREADS, Real, PASS>(p, t, tile, warpAgg, warpPrefix);
}

// doubling: per coefficient set, kDoublingMatrices matrices T_{B 2^k} (D x D). Tiles per thread: 2^log2Per.
template <int D, typename Real>
__global__ void __launch_bounds__(kLookAheadThreads) iirLookAheadKernel(const ScanParams<Real> p, const Real* doubling,
                                                                          long long doublingStride, int log2Per)
{
    __shared__ Real carry[kLookAheadThreads][D];
    const long long channel = blockIdx.x;
    const int set = p.channelSet != nullptr ? p.channelSet[channel] : 0;
    const Real* tm = doubling + set * doublingStride;
    const Real* stepTile = tm; // T_B
    const long long n = p.tilesPerChannel;
    const long long per = 1ll << log2Per;
    const long long begin = min(n, threadIdx.x * per), end = min(n, begin + per);
    const Real* agg = p.aggregates + channel * n * D;
    Real* entering = p.inclusives + channel * n * D;
    const Real* init = p.stateIn + channel * p.stateStride + p.stateStride - D; // the state entering the channel

    Real s[D];
#pragma unroll
    for (int j = 0; j < D; ++j)
        s[j] = threadIdx.x == 0 ? init[j] : Real(0);
    for (long long k = begin; k < end; ++k) {
        Real a[D];
#pragma unroll
        for (int j = 0; j < D; ++j)
            a[j] = agg[k * D + j];
        matVecAdd<D>(stepTile, s, a);
#pragma unroll
        for (int j = 0; j < D; ++j)
            s[j] = a[j];
    }
    // Recursive doubling across threads: s_i += T_{per B d} s_{i-d}.
    int lg = log2Per;
    for (int d = 1; d < kLookAheadThreads; d <<= 1, ++lg) {
#pragma unroll
        for (int j = 0; j < D; ++j)
            carry[threadIdx.x][j] = s[j];
        __syncthreads();
        if (static_cast<int>(threadIdx.x) >= d && lg < kDoublingMatrices) {
            Real r[D];
#pragma unroll
            for (int j = 0; j < D; ++j)
                r[j] = carry[threadIdx.x - d][j];
            matVecAdd<D>(tm + static_cast<long long>(lg) * D * D, r, s);
        }
        __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < D; ++j)
        carry[threadIdx.x][j] = s[j];
    __syncthreads();
    // State entering this thread's first tile, then forward over its tiles.
#pragma unroll
    for (int j = 0; j < D; ++j)
        s[j] = threadIdx.x == 0 ? init[j] : carry[threadIdx.x - 1][j];
    for (long long k = begin; k < end; ++k) {
        Real a[D];
#pragma unroll
        for (int j = 0; j < D; ++j) {
            entering[k * D + j] = s[j];
            a[j] = agg[k * D + j];
        }
        matVecAdd<D>(stepTile, s, a);
#pragma unroll
        for (int j = 0; j < D; ++j)
            s[j] = a[j];
    }
}

} // namespace quell::gpu::iir
