// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The persistent RLS kernel (paper 001, eqs. 9-17, on a modern GPU). One launch processes a whole block
// of samples; a channel's rows of P are spread over `blocksPerChannel` blocks that meet once per sample
// once per sample. Per sample n, every block:
//   A. its rows i: p_i <- (p_i - (v_i v_j) r) / lambda   (the deferred rank-one update of sample n-1)
//                  v_i(n) = p_i . u(n)                     (fused: each element read once, written once)
//      and the partial sums over its rows of u_i v_i(n) and w_i u_i(n); writes v_i and the partials.
//   B. the exchange (the only grid-wide synchronisation of the sample): every value is published as a
//      64-bit word {value, tag = sample number + 1} with one relaxed store, so a reader that sees the
//      tag it expects also sees the value (single-copy atomicity of 64-bit accesses). Each thread polls
//      exactly the words it needs (its columns of v, and warp 0 the partials): no counter, no fence,
//      and the data arrives in the same round trip as the synchronisation. Double buffering by sample
//      parity is safe because a block can only publish sample n+2 after reading every block's
//      partials of n+1, which each block publishes after it has read v(n). By default a counter
//      barrier (RlsGridBarrier.cuh) comes first and the words are then read once: polling alone was
//      measured 1.5-3x slower (all threads of all blocks spinning on L2 slow the late publishers).
//   C. sums the partials of all blocks in a fixed order (so every block gets bit-identical scalars),
//      forms e = d - w^T u, alpha = lambda + u^T v, decides pause / update / re-initialisation exactly
//      as the CPU twin (quell::dsp::Rls), updates w_i of its rows and loads the whole v(n) it needs for
//      the next sample's rank-one update.
// Numerics follow the CPU twin operation by operation: the update of p_ij is written with __fmul_rn /
// __fsub_rn so nvcc cannot contract it into FMAs; (v_i * v_j) is formed first, so p_ij and p_ji receive
// bit-identical updates and P stays exactly symmetric. The dot products may use FMAs (they only change
// rounding of v, not symmetry).
//
// The cluster variant (kCluster, one thread-block cluster of at most 16 blocks per channel, launched
// with a cluster dimension): B becomes each block writing its v_i and partials into its OWN shared
// memory (double-buffered by sample parity), one cluster.sync() (the hardware cluster barrier, release /
// acquire), and every block reading the others' values through distributed shared memory. Nothing goes
// through L2 inside the loop; the arithmetic and the order of every sum are the same as in the grid
// variant, so both give bit-identical output for the same rows per block and threads (tested).
// Double buffering with one cluster.sync per sample is safe for the same reason as above: a block
// rewrites buffer n & 1 only in sample n + 2, after the cluster.sync of n + 1, which every other block
// reaches only after it has read the values of n. A last cluster.sync keeps every block (and its shared
// memory) alive until the others have finished reading it.
#include <cuda_runtime.h>

#include <cooperative_groups.h>

#include <cuda/atomic>

#include "rls/RlsGridBarrier.cuh"
#include "rls/RlsKernelParams.cuh"

namespace quell::gpu::rls {

// Where u_j of sample s sits in a filter's far-end windows: u stacks the inputs' last L samples each,
// newest first (dsp::Rls's layout), and input i's window (L samples of history, then the block) starts at
// i * inputStride. One input: win[N + s - j].
__device__ __forceinline__ int regressorIndex(const KernelParams& p, int s, int j)
{
    const int i = j >= p.inputTaps ? 1 : 0;   // inputs <= 2
    return i * (p.inputStride + p.inputTaps) + p.inputTaps + s - j;
}

constexpr unsigned int kFullMask = 0xffffffffu;
constexpr int kMaxThreads = 512;
constexpr int kMaxBlocksPerChannel = 160; // the partials of a channel are collected by one warp, 5 per lane

__device__ __forceinline__ float sanitised(float x) { return isfinite(x) ? x : 0.0f; }

__device__ __forceinline__ float component(const float4& a, int q)
{
    return q == 0 ? a.x : q == 1 ? a.y : q == 2 ? a.z : a.w;
}
__device__ __forceinline__ float& component(float4& a, int q)
{
    return q == 0 ? a.x : q == 1 ? a.y : q == 2 ? a.z : a.w;
}

// The fused update of 4 rows (this thread's columns) and their partial dot products with u.
template <int C4>
__device__ __forceinline__ void updateTile(float4 (&tile)[4][C4], const float (&vRow)[4], const float4 (&v)[C4],
                                           const float4 (&u)[C4], bool pending, float r, float invLambda,
                                           float (&acc)[4])
{
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        acc[k] = 0.0f;
#pragma unroll
        for (int c = 0; c < C4; ++c) {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                float p = component(tile[k][c], q);
                if (pending)
                    p = __fmul_rn(__fsub_rn(p, __fmul_rn(__fmul_rn(vRow[k], component(v[c], q)), r)), invLambda);
                component(tile[k][c], q) = p;
                acc[k] = fmaf(p, component(u[c], q), acc[k]);
            }
        }
    }
}

// Reduces the 4 row sums over the warp: 6 shuffles instead of 20 (halving exchange). Afterwards lane
// 8k holds the warp's sum of row k.
__device__ __forceinline__ float warpReduceFour(const float (&acc)[4], int lane)
{
    const bool hi = (lane & 16) != 0;
    float keep0 = hi ? acc[2] : acc[0], keep1 = hi ? acc[3] : acc[1];
    const float send0 = hi ? acc[0] : acc[2], send1 = hi ? acc[1] : acc[3];
    keep0 += __shfl_xor_sync(kFullMask, send0, 16);
    keep1 += __shfl_xor_sync(kFullMask, send1, 16);
    const bool hi8 = (lane & 8) != 0;
    float s = hi8 ? keep1 : keep0;
    s += __shfl_xor_sync(kFullMask, hi8 ? keep0 : keep1, 8);
    s += __shfl_xor_sync(kFullMask, s, 4);
    s += __shfl_xor_sync(kFullMask, s, 2);
    s += __shfl_xor_sync(kFullMask, s, 1);
    return s;
}

__device__ __forceinline__ void publish(unsigned long long* word, float value, unsigned int tag)
{
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*word).store(
        (static_cast<unsigned long long>(tag) << 32) | __float_as_uint(value), cuda::memory_order_relaxed);
}

__device__ __forceinline__ unsigned long long loadWord(unsigned long long* word)
{
    return cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*word).load(cuda::memory_order_relaxed);
}

// Collects M published words: all loads are issued first (one round trip, not M), then each word that
// does not carry `tag` yet is polled again, with a short sleep so spinning threads do not crowd the L2
// slices the late publishers are writing to. Entries with active[i] false read as 0.
template <int M>
__device__ __forceinline__ void collectWords(unsigned long long* const (&words)[M], const bool (&active)[M],
                                             unsigned int tag, float (&values)[M])
{
    unsigned long long x[M];
#pragma unroll
    for (int i = 0; i < M; ++i)
        x[i] = active[i] ? loadWord(words[i]) : (static_cast<unsigned long long>(tag) << 32);
#pragma unroll
    for (int i = 0; i < M; ++i) {
        while (static_cast<unsigned int>(x[i] >> 32) != tag) {
            __nanosleep(32);
            x[i] = loadWord(words[i]);
        }
        values[i] = __uint_as_float(static_cast<unsigned int>(x[i]));
    }
}

__device__ __forceinline__ float valueOf(const unsigned long long* word)
{
    return __uint_as_float(static_cast<unsigned int>(*word));
}

__device__ __forceinline__ float warpSum(float x)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_xor_sync(kFullMask, x, o);
    return x;
}

// Scalars decided once per sample (in every block identically), broadcast through shared memory.
struct SampleDecision {
    int action;   // 0 paused, 1 update, 2 re-initialise P, 3 re-initialise P and zero w
    float g;      // e / alpha
    float r;      // 1 / alpha
};

// Thread-block clusters exist from sm_90 on. The kernel is also compiled for older targets (the default
// architecture list holds 80), where the cluster variant is never launched: prepare() chooses it only on
// devices that report cluster launch support. These wrappers keep that instantiation compilable.
__device__ __forceinline__ void clusterSync()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().sync();
#else
    __trap();
#endif
}

__device__ __forceinline__ const float* clusterSharedOf(const float* local, unsigned int rank)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().map_shared_rank(local, rank);
#else
    (void)rank;
    __trap();
    return local;
#endif
}

// INPUTS: far-end channels stacked in u (1 or 2); the single-channel kernel keeps the plain
// loads win[N + s - j] (the two-channel index arithmetic cost it 2 % of its samples/s on the H100).
template <int C4, int RG, bool kCluster, int INPUTS>
__global__ void __launch_bounds__(kMaxThreads, 1) persistentRlsKernel(const KernelParams p)
{
    extern __shared__ float4 dynamicShared[];
    __shared__ SampleDecision decision;

    const int T = blockDim.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, W = T >> 5;
    const int K = p.blocksPerChannel, R = p.rowsPerBlock, G = R / 4, N = p.taps;
    const int channel = blockIdx.x / K, slice = blockIdx.x % K, row0 = slice * R;
    const int SG = max(0, min(p.sharedGroups, G - RG));

    float4* sharedP = dynamicShared;                                            // [SG][4][C4][T]
    float* ring = reinterpret_cast<float*>(sharedP + static_cast<size_t>(SG) * 4 * C4 * T);
    float* vRows = ring + 2 * 8 * W * 4;                                        // v_i of this block's rows
    float* wRows = vRows + R;
    float* vPub = wRows + R;             // cluster variant: [2][R] v_i of this block's rows, by parity
    float* partPub = vPub + 2 * R;       // cluster variant: [2][2] {u^T v, w^T u} of this block, by parity

    float* P = p.P + channel * p.pStride;
    float* wHome = p.w + static_cast<size_t>(channel) * K * R;
    unsigned long long* vBase = p.v + static_cast<size_t>(channel) * 2 * p.vLength;
    unsigned long long* partials = p.partials + static_cast<size_t>(channel) * 2 * 2 * K; // [2][K][uv, wu]
    const float* win = p.windowIn + static_cast<size_t>(channel) * p.windowStride;
    const float* mic = p.mic + static_cast<size_t>(channel) * p.ioStride;
    float* out = p.out + static_cast<size_t>(channel) * p.ioStride;
    ChannelState* st = p.state + channel;
    const bool writer = slice == 0;

    auto rowPtr = [&](int localRow) {
        return reinterpret_cast<float4*>(P + static_cast<size_t>(row0 + localRow) * p.paddedColumns) + tid;
    };
    auto sharedTile = [&](int sg, int k, int c) -> float4& {
        return sharedP[(static_cast<size_t>(sg) * 4 * C4 + k * C4 + c) * T + tid];
    };

    // ---- state in ----
    int pending = st->pending;
    float pendingR = st->pendingR;
    unsigned long long done = st->samplesDone;   // sample number of the next sample
    double uEnergy = st->uEnergy;
    int sinceResum = st->sinceResum;
    unsigned long long reinits = st->reinitialisations, paused = st->pausedSamples,
                       sanitisedCount = st->sanitisedSamples;

    float4 regP[RG > 0 ? RG : 1][4][C4];
    // This block's rows of P that are held on chip, group by group: registers for the first RG groups,
    // shared memory for the next SG. visit(held tile, group, row in group, column chunk). Loading and
    // storing walk them with it; the sample loop and the restart keep their own loops (with
    // reductions, and the global rows), spelled out so the register allocation of the hot loop stays
    // as measured.
    auto forEachHeldTile = [&](auto&& visit) {
#pragma unroll
        for (int g = 0; g < RG; ++g)
#pragma unroll
            for (int k = 0; k < 4; ++k)
#pragma unroll
                for (int c = 0; c < C4; ++c)
                    if (g < G)
                        visit(regP[g][k][c], g, k, c);
        for (int sg = 0; sg < SG; ++sg)
            for (int k = 0; k < 4; ++k)
                for (int c = 0; c < C4; ++c)
                    visit(sharedTile(sg, k, c), RG + sg, k, c);
    };
    forEachHeldTile([&](float4& tile, int g, int k, int c) { tile = rowPtr(g * 4 + k)[c * T]; });

    // v of the last sample (published by the previous launch, which has completed).
    const unsigned long long* vLast = vBase + ((done + 1) & 1) * p.vLength;
    float4 v[C4];
#pragma unroll
    for (int c = 0; c < C4; ++c)
#pragma unroll
        for (int q = 0; q < 4; ++q)
            component(v[c], q) = valueOf(vLast + 4 * (tid + c * T) + q);
    for (int i = tid; i < R; i += T) {
        vRows[i] = valueOf(vLast + row0 + i);
        wRows[i] = wHome[row0 + i];
    }
    __syncthreads();

    // Where this thread's u elements come from: element j of chunk c is win[uShift[c] + N + s - j] (u
    // stacks the inputs' windows; every input's part of u is a whole number of chunks, so a chunk lies in
    // one input). One input: shift 0.
    int uShift[C4];
#pragma unroll
    for (int c = 0; c < C4; ++c) {
        const int j0 = 4 * (tid + c * T);
        uShift[c] = INPUTS == 1 ? 0 : regressorIndex(p, 0, j0) + j0 - N;
    }
    auto uIndex = [&](int s, int j) { return INPUTS == 1 ? N + s - j : regressorIndex(p, s, j); };
    const float lambda = p.lambda, invLambda = p.invLambda;
    for (int s = 0; s < p.samples; ++s) {
        // ---- A: fused row pass ----
        float4 u[C4];
#pragma unroll
        for (int c = 0; c < C4; ++c)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int j = 4 * (tid + c * T) + q;
                component(u[c], q) = j < N ? sanitised(__ldg(win + uShift[c] + N + s - j)) : 0.0f;
            }
        const int parity = static_cast<int>(done & 1);
        const unsigned int tag = static_cast<unsigned int>(done + 1);
        unsigned long long* vOut = vBase + parity * p.vLength;
        unsigned long long* partOut = partials + parity * 2 * K;
        // The scalar inputs of phase C, loaded now so their latency hides behind the row pass.
        // Per input: the sample entering u and the one leaving it (scalars: an indexed array would live in
        // local memory, on the per-sample critical path).
        float rawD = 0.0f, rawX0 = 0.0f, rawLeaving0 = 0.0f, rawX1 = 0.0f, rawLeaving1 = 0.0f;
        if (tid == 0) {
            rawD = mic[s];
            rawX0 = win[p.inputTaps + s];
            rawLeaving0 = win[s];
            if constexpr (INPUTS > 1) {
                rawX1 = win[p.inputStride + p.inputTaps + s];
                rawLeaving1 = win[p.inputStride + s];
            }
        }
        const bool pend = pending != 0;
        float uvAcc = 0.0f, wuAcc = 0.0f;   // warp 0: partial sums over this block's rows

        // After each group: warp-reduce its 4 row sums into the ring; after every 8 groups (and the
        // last), one __syncthreads and warp 0 finishes those rows (sum over warps in a fixed order).
        auto finishGroup = [&](int g, const float (&acc)[4]) {
            const float s4 = warpReduceFour(acc, lane);
            const int half = (g >> 3) & 1, slot = g & 7;
            if ((lane & 7) == 0)
                ring[((half * 8 + slot) * W + warp) * 4 + (lane >> 3)] = s4;
            if (slot == 7 || g == G - 1) {
                __syncthreads();
                if (warp == 0) {
                    const int local = (g >> 3) * 32 + lane;
                    if (local < R) {
                        const int lslot = lane >> 2, k = lane & 3;
                        float sum = 0.0f;
#pragma unroll
                        for (int w2 = 0; w2 < kMaxThreads / 32; ++w2) // unrolled: the loads overlap
                            if (w2 < W)
                                sum += ring[((half * 8 + lslot) * W + w2) * 4 + k];
                        const int gi = row0 + local;
                        const float ui = gi < N ? sanitised(__ldg(win + uIndex(s, gi))) : 0.0f;
                        vRows[local] = sum;
                        if constexpr (kCluster)
                            vPub[parity * R + local] = sum;
                        else
                            publish(vOut + gi, sum, tag);
                        uvAcc = fmaf(ui, sum, uvAcc);
                        wuAcc = fmaf(wRows[local], ui, wuAcc);
                    }
                }
            }
        };

#pragma unroll
        for (int g = 0; g < RG; ++g) {
            if (g < G) {
                float vRow[4], acc[4];
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    vRow[k] = vRows[g * 4 + k];
                updateTile<C4>(regP[g], vRow, v, u, pend, pendingR, invLambda, acc);
                finishGroup(g, acc);
            }
        }
        for (int g = RG; g < G; ++g) {
            const bool inShared = g < RG + SG;
            float4 tile[4][C4];
            float vRow[4], acc[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                vRow[k] = vRows[g * 4 + k];
#pragma unroll
                for (int c = 0; c < C4; ++c)
                    tile[k][c] = inShared ? sharedTile(g - RG, k, c) : rowPtr(g * 4 + k)[c * T];
            }
            updateTile<C4>(tile, vRow, v, u, pend, pendingR, invLambda, acc);
#pragma unroll
            for (int k = 0; k < 4; ++k)
#pragma unroll
                for (int c = 0; c < C4; ++c) {
                    if (inShared)
                        sharedTile(g - RG, k, c) = tile[k][c];
                    else if (pend)
                        rowPtr(g * 4 + k)[c * T] = tile[k][c];
                }
            finishGroup(g, acc);
        }
        if (warp == 0) {
            uvAcc = warpSum(uvAcc);
            wuAcc = warpSum(wuAcc);
            if (lane == 0) {
                if constexpr (kCluster) {
                    partPub[2 * parity] = uvAcc;
                    partPub[2 * parity + 1] = wuAcc;
                } else {
                    publish(partOut + 2 * slice, uvAcc, tag);
                    publish(partOut + 2 * slice + 1, wuAcc, tag);
                }
            }
        }

        // ---- B: the one exchange of the sample ----
        if constexpr (kCluster) {
            // Every block's v(n) for this thread's columns, from the owner's shared memory: 4 columns of
            // a float4 belong to one block (R is a multiple of 4), so one 16-byte DSMEM load each.
            clusterSync();
#pragma unroll
            for (int c = 0; c < C4; ++c) {
                const int j = 4 * (tid + c * T);
                if (j < K * R) {
                    const float* owner = clusterSharedOf(
                        vPub + parity * R, static_cast<unsigned int>(j / R));
                    v[c] = *reinterpret_cast<const float4*>(owner + j % R);
                } else {
                    v[c] = make_float4(0.f, 0.f, 0.f, 0.f); // never published in the grid variant either
                }
            }
        } else {
        if (p.counterBarrier && K > 1)
            groupBarrier(p.barrier + channel, static_cast<unsigned int>((s + 1) * K));
        // Every block's v(n) for this thread's columns (needed if the sample updates; collected in any
        // case, it is the synchronisation that keeps the double buffers safe).
        {
            unsigned long long* words[4 * C4];
            bool active[4 * C4];
            float values[4 * C4];
#pragma unroll
            for (int i = 0; i < 4 * C4; ++i) {
                const int j = 4 * (tid + (i / 4) * T) + (i % 4);
                active[i] = j < K * R; // columns past the last row are never published (v_j = 0 there)
                words[i] = vOut + (active[i] ? j : 0);
            }
            collectWords<4 * C4>(words, active, tag, values);
#pragma unroll
            for (int i = 0; i < 4 * C4; ++i)
                component(v[i / 4], i % 4) = values[i];
        }
        } // grid variant

        // ---- C: scalars (identical in every block), w of this block's rows, v for the next sample ----
        if (warp == 0) {
            // Lane l sums blocks l, l + 32, ... (at most kMaxBlocksPerChannel / 32 of them), in that order.
            constexpr int M = 2 * (kMaxBlocksPerChannel / 32);
            float values[M];
            if constexpr (kCluster) { // the same values in the same lanes as the grid variant
#pragma unroll
                for (int i = 0; i < M; ++i) {
                    const int b = lane + 32 * (i / 2);
                    values[i] = b < K ? clusterSharedOf(
                                            partPub + 2 * parity, static_cast<unsigned int>(b))[i % 2]
                                      : 0.0f;
                }
            } else {
                unsigned long long* words[M];
                bool active[M];
#pragma unroll
                for (int i = 0; i < M; ++i) {
                    const int b = lane + 32 * (i / 2);
                    active[i] = b < K;
                    words[i] = partOut + 2 * (active[i] ? b : 0) + (i % 2);
                }
                collectWords<M>(words, active, tag, values);
            }
            float uv = 0.0f, wu = 0.0f;
#pragma unroll
            for (int i = 0; i < M; i += 2) {
                uv += values[i];
                wu += values[i + 1];
            }
            uv = warpSum(uv);
            wu = warpSum(wu);
            if (lane == 0) {
                bool bad = !isfinite(rawD) || !isfinite(rawX0);
                {
                    const double xIn = sanitised(rawX0), xOut = sanitised(rawLeaving0);
                    uEnergy += xIn * xIn - xOut * xOut;
                }
                if constexpr (INPUTS > 1) { // input after input, as the CPU twin
                    bad = bad || !isfinite(rawX1);
                    const double xIn = sanitised(rawX1), xOut = sanitised(rawLeaving1);
                    uEnergy += xIn * xIn - xOut * xOut;
                }
                if (bad)
                    ++sanitisedCount;
                const float d = sanitised(rawD);
                if (++sinceResum >= 4096) { // bound the drift of the running sum, as the CPU twin
                    uEnergy = 0.0;
                    for (int i = 0; i < N; ++i) {
                        const double x = sanitised(win[uIndex(s, i)]);
                        uEnergy += x * x;
                    }
                    sinceResum = 0;
                }
                const float e = __fsub_rn(d, wu);
                float result = e;
                SampleDecision dec{0, 0.0f, 0.0f};
                if (uEnergy <= p.silenceEnergy) {
                    ++paused;
                } else {
                    const float alpha = __fadd_rn(lambda, uv);
                    if (!(alpha >= __fmul_rn(0.5f, lambda)) || !isfinite(alpha) || !isfinite(e)) {
                        ++reinits;
                        dec.action = isfinite(e) ? 2 : 3;
                        result = isfinite(e) ? e : d;
                    } else {
                        dec.action = 1;
                        dec.r = __fdiv_rn(1.0f, alpha);
                        dec.g = __fmul_rn(e, dec.r);
                    }
                }
                decision = dec;
                if (writer)
                    out[s] = result;
            }
        }
        __syncthreads();
        const SampleDecision dec = decision;
        if (dec.action == 1) {
            for (int i = tid; i < R; i += T)
                wRows[i] = __fadd_rn(wRows[i], __fmul_rn(dec.g, vRows[i]));
            pending = 1;
            pendingR = dec.r;
        } else {
            pending = 0;
            if (dec.action >= 2) { // P = I / delta for this block's rows; w kept unless e was not finite
                auto identityTile = [&](int localRow, int c) {
                    float4 t = make_float4(0.f, 0.f, 0.f, 0.f);
                    const int gi = row0 + localRow;
#pragma unroll
                    for (int q = 0; q < 4; ++q)
                        if (gi < N && 4 * (tid + c * T) + q == gi)
                            component(t, q) = p.diag;
                    return t;
                };
#pragma unroll
                for (int g = 0; g < RG; ++g)
#pragma unroll
                    for (int k = 0; k < 4; ++k)
#pragma unroll
                        for (int c = 0; c < C4; ++c)
                            regP[g][k][c] = identityTile(g * 4 + k, c);
                for (int g = RG; g < G; ++g)
                    for (int k = 0; k < 4; ++k)
                        for (int c = 0; c < C4; ++c) {
                            if (g < RG + SG)
                                sharedTile(g - RG, k, c) = identityTile(g * 4 + k, c);
                            else
                                rowPtr(g * 4 + k)[c * T] = identityTile(g * 4 + k, c);
                        }
                if (dec.action == 3)
                    for (int i = tid; i < R; i += T)
                        wRows[i] = 0.0f;
            }
        }
        ++done;
    }

    if constexpr (kCluster) {
        // v of the last sample, for the next launch (the grid variant published it inside the loop).
        unsigned long long* vLastOut = vBase + ((done + 1) & 1) * p.vLength;
        for (int i = tid; i < R; i += T)
            publish(vLastOut + row0 + i, vRows[i], static_cast<unsigned int>(done));
        clusterSync(); // no block leaves while others may read its shared memory
    }

    // ---- state out ----
    forEachHeldTile([&](float4& tile, int g, int k, int c) { rowPtr(g * 4 + k)[c * T] = tile; });
    for (int i = tid; i < R; i += T)
        wHome[row0 + i] = wRows[i];
    if (writer) {
        // The next launch's far-end history: per input, the last L samples of (history, this block).
        float* next = p.windowOut + static_cast<size_t>(channel) * p.windowStride;
        for (int i = tid; i < N; i += T) {
            const int at = (INPUTS > 1 && i >= p.inputTaps ? p.inputStride - p.inputTaps : 0) + i;   // input's window + k
            next[at] = win[at + p.samples];
        }
        if (tid == 0) {
            st->pending = pending;
            st->pendingR = pendingR;
            st->samplesDone = done;
            st->uEnergy = uEnergy;
            st->sinceResum = sinceResum;
            st->reinitialisations = reinits;
            st->pausedSamples = paused;
            st->sanitisedSamples = sanitisedCount;
        }
    }
}

} // namespace quell::gpu::rls
