// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The persistent RLS kernel (paper 001, eqs. 9-17, on a modern GPU). One launch processes a whole block
// of samples; a channel's rows of P are spread over `blocksPerChannel` blocks that meet once per sample.
// Per sample n, every block runs four phases (PersistentRlsBlock below, one method each):
//   A. rowPass: its rows i: p_i <- (p_i - (v_i v_j) r) / lambda   (the deferred rank-one update of n-1)
//                           v_i(n) = p_i . u(n)                     (fused: each element read once, written once)
//      and the partial sums over its rows of u_i v_i(n) and w_i u_i(n); publishes v_i and the partials.
//   B. exchange (the only grid-wide synchronisation of the sample, RlsExchange.cuh): each thread collects
//      exactly the values it needs (its columns of v); no counter, no fence, and the data arrives in the
//      same round trip as the synchronisation. Double buffering by sample parity is safe because a block
//      can only publish sample n+2 after reading every block's partials of n+1, which each block publishes
//      after it has read v(n). By default a counter barrier (RlsGridBarrier.cuh) comes first and the words
//      are then read once: polling alone was measured 1.5-3x slower (all threads of all blocks spinning on
//      L2 slow the late publishers).
//   C. decide: warp 0 sums the partials of all blocks in a fixed order (so every block gets bit-identical
//      scalars), forms e = d - w^T u, alpha = lambda + u^T v, and decides pause / update /
//      re-initialisation exactly as the CPU twin (quell::dsp::Rls);
//   D. apply: updates w_i of its rows, or restarts its rows of P.
// The arithmetic of the row pass, and why it matches the CPU twin bit for bit, is in RlsRowMath.cuh.
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

#include "rls/RlsExchange.cuh"
#include "rls/RlsGridBarrier.cuh"
#include "rls/RlsKernelParams.cuh"
#include "rls/RlsRowMath.cuh"

namespace quell::gpu::rls {

constexpr int kMaxThreads = 512;
constexpr int kMaxBlocksPerChannel = 160; // the partials of a channel are collected by one warp, 5 per lane

// Where u_j of sample s sits in a filter's far-end windows: u stacks the inputs' last L samples each,
// newest first (dsp::Rls's layout), and input i's window (L samples of history, then the block) starts at
// i * inputStride. One input: win[N + s - j].
__device__ __forceinline__ int regressorIndex(const KernelParams& p, int s, int j)
{
    const int i = j >= p.inputTaps ? 1 : 0;   // inputs <= 2
    return i * (p.inputStride + p.inputTaps) + p.inputTaps + s - j;
}

// Scalars decided once per sample (in every block identically), broadcast through shared memory.
struct SampleDecision {
    int action;   // 0 paused, 1 update, 2 re-initialise P, 3 re-initialise P and zero w
    float g;      // e / alpha
    float r;      // 1 / alpha
};

// Where sample n's values are exchanged: buffer n & 1, tagged n + 1.
struct SampleSlot {
    int parity;
    unsigned int tag;
    unsigned long long* vOut;
    unsigned long long* partOut;
};

// The scalars of phase C that come from memory, loaded by thread 0 before the row pass so their latency
// hides behind it. Per input: the sample entering u and the one leaving it (scalars: an indexed array
// would live in local memory, on the per-sample critical path).
struct SampleInputs {
    float d = 0.0f, x0 = 0.0f, leaving0 = 0.0f, x1 = 0.0f, leaving1 = 0.0f;
};

// INPUTS: far-end channels stacked in u (1 or 2); the single-channel kernel keeps the plain
// loads win[N + s - j] (the two-channel index arithmetic cost it 2 % of its samples/s on the H100).
template <int C4, int RG, bool kCluster, int INPUTS>
class PersistentRlsBlock {
public:
    __device__ __forceinline__ PersistentRlsBlock(const KernelParams& params, float4* dynamicShared,
                                                  SampleDecision& decision)
        : p(params), decision_(decision)
    {
        T = blockDim.x;
        tid = threadIdx.x;
        lane = tid & 31;
        warp = tid >> 5;
        W = T >> 5;
        K = p.blocksPerChannel;
        R = p.rowsPerBlock;
        G = R / 4;
        N = p.taps;
        channel = blockIdx.x / K;
        slice = blockIdx.x % K;
        row0 = slice * R;
        SG = max(0, min(p.sharedGroups, G - RG));
        writer = slice == 0;

        sharedP = dynamicShared;                                                   // [SG][4][C4][T]
        ring = reinterpret_cast<float*>(sharedP + static_cast<size_t>(SG) * 4 * C4 * T);
        vRows = ring + 2 * 8 * W * 4;   // v_i of this block's rows
        wRows = vRows + R;
        vPub = wRows + R;               // cluster variant: [2][R] v_i of this block's rows, by parity
        partPub = vPub + 2 * R;         // cluster variant: [2][2] {u^T v, w^T u} of this block, by parity

        // This thread's first column of the block's first row; a tile is an int offset from it (R rows of
        // paddedColumns floats fit an int). Computed per tile in 64 bits from the row index, the address
        // took 52 more instructions per row group of the row pass and N = 4096 ran 2.7 % slower (NOTES.md,
        // run 12).
        pHome = reinterpret_cast<float4*>(p.P + channel * p.pStride + static_cast<size_t>(row0) * p.paddedColumns) + tid;
        rowStride4 = p.paddedColumns / 4;
        wHome = p.w + static_cast<size_t>(channel) * K * R;
        vBase = p.v + static_cast<size_t>(channel) * 2 * p.vLength;
        partials = p.partials + static_cast<size_t>(channel) * 2 * 2 * K; // [2][K][uv, wu]
        win = p.windowIn + static_cast<size_t>(channel) * p.windowStride;
        mic = p.mic + static_cast<size_t>(channel) * p.ioStride;
        out = p.out + static_cast<size_t>(channel) * p.ioStride;
        st = p.state + channel;
    }

    // State in: the channel's scalars, this block's held rows of P, v(n-1), and its rows of v and w.
    __device__ __forceinline__ void begin()
    {
        pending = st->pending;
        pendingR = st->pendingR;
        done = st->samplesDone;
        uEnergy = st->uEnergy;
        sinceResum = st->sinceResum;
        reinits = st->reinitialisations;
        paused = st->pausedSamples;
        sanitisedCount = st->sanitisedSamples;

        forEachHeldTile([&](float4& tile, int g, int k, int c) { tile = *globalTile(g * 4 + k, c); });

        // v of the last sample (published by the previous launch, which has completed).
        const unsigned long long* vLast = vBase + ((done + 1) & 1) * p.vLength;
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

        // Where this thread's u elements come from: element j of chunk c is win[uShift[c] + N + s - j]
        // (u stacks the inputs' windows; every input's part of u is a whole number of chunks, so a chunk
        // lies in one input). One input: shift 0.
#pragma unroll
        for (int c = 0; c < C4; ++c) {
            const int j0 = 4 * (tid + c * T);
            uShift[c] = INPUTS == 1 ? 0 : regressorIndex(p, 0, j0) + j0 - N;
        }
    }

    // One sample: phases A to D.
    __device__ __forceinline__ void step(int s)
    {
        float4 u[C4];
#pragma unroll
        for (int c = 0; c < C4; ++c)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int j = 4 * (tid + c * T) + q;
                component(u[c], q) = j < N ? sanitised(__ldg(win + uShift[c] + N + s - j)) : 0.0f;
            }
        const SampleSlot slot = slotOf(done);
        const SampleInputs in = loadInputs(s);
        rowPass(s, slot, u);
        exchange(s, slot);
        decide(s, slot, in);
        __syncthreads();
        apply();
        ++done;
    }

    // State out: v of the last sample (cluster variant), the held rows of P, w, the next launch's far-end
    // history and the channel's scalars.
    __device__ __forceinline__ void end()
    {
        if constexpr (kCluster) {
            // The grid variant published v inside the loop.
            unsigned long long* vLastOut = vBase + ((done + 1) & 1) * p.vLength;
            for (int i = tid; i < R; i += T)
                publish(vLastOut + row0 + i, vRows[i], static_cast<unsigned int>(done));
            clusterSync(); // no block leaves while others may read its shared memory
        }

        forEachHeldTile([&](float4& tile, int g, int k, int c) { *globalTile(g * 4 + k, c) = tile; });
        for (int i = tid; i < R; i += T)
            wHome[row0 + i] = wRows[i];
        if (writer) {
            // Per input, the last L samples of (history, this block).
            float* next = p.windowOut + static_cast<size_t>(channel) * p.windowStride;
            for (int i = tid; i < N; i += T) {
                const int at = (INPUTS > 1 && i >= p.inputTaps ? p.inputStride - p.inputTaps : 0) + i; // input's window + k
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

private:
    __device__ __forceinline__ float4* globalTile(int localRow, int c) const
    {
        return pHome + (localRow * rowStride4 + c * T);
    }
    __device__ __forceinline__ float4& sharedTile(int sg, int k, int c) const
    {
        return sharedP[(static_cast<size_t>(sg) * 4 * C4 + k * C4 + c) * T + tid];
    }
    __device__ __forceinline__ int uIndex(int s, int j) const
    {
        return INPUTS == 1 ? N + s - j : regressorIndex(p, s, j);
    }
    __device__ __forceinline__ SampleSlot slotOf(unsigned long long n) const
    {
        const int parity = static_cast<int>(n & 1);
        return {parity, static_cast<unsigned int>(n + 1), vBase + parity * p.vLength, partials + parity * 2 * K};
    }

    // This block's rows of P are held group by group (4 rows each): in registers for the first RG groups,
    // in shared memory for the next SG, in global memory for the rest.
    // Every tile held on chip: visit(tile, group, row in group, column chunk). Loading and storing walk
    // them with it.
    template <class Visit>
    __device__ __forceinline__ void forEachHeldTile(Visit&& visit)
    {
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
    }

    // The row-group loop: every group in order. update(tile, g) sees the group's tile (the register
    // groups in place, the others as a copy from shared or global memory) and returns whether it changed
    // it (a changed copy is written back); then after(g). The register groups are unrolled (their tiles
    // are compile-time registers), the others are not.
    template <bool kReadTiles, class Update, class After>
    __device__ __forceinline__ void forEachGroup(Update&& update, After&& after)
    {
#pragma unroll
        for (int g = 0; g < RG; ++g) {
            if (g < G) {
                update(regP[g], g);
                after(g);
            }
        }
        for (int g = RG; g < G; ++g) {
            const bool inShared = g < RG + SG;
            float4 tile[4][C4];
#pragma unroll
            for (int k = 0; k < 4; ++k)
#pragma unroll
                for (int c = 0; c < C4; ++c)
                    tile[k][c] = !kReadTiles                ? make_float4(0.f, 0.f, 0.f, 0.f)
                                 : inShared ? sharedTile(g - RG, k, c) : *globalTile(g * 4 + k, c);
            if (update(tile, g)) {
#pragma unroll
                for (int k = 0; k < 4; ++k)
#pragma unroll
                    for (int c = 0; c < C4; ++c) {
                        if (inShared)
                            sharedTile(g - RG, k, c) = tile[k][c];
                        else
                            *globalTile(g * 4 + k, c) = tile[k][c];
                    }
            }
            after(g);
        }
    }

    __device__ __forceinline__ SampleInputs loadInputs(int s) const
    {
        SampleInputs in;
        if (tid == 0) {
            in.d = mic[s];
            in.x0 = win[p.inputTaps + s];
            in.leaving0 = win[s];
            if constexpr (INPUTS > 1) {
                in.x1 = win[p.inputStride + p.inputTaps + s];
                in.leaving1 = win[p.inputStride + s];
            }
        }
        return in;
    }

    // ---- A: the fused row pass ----
    __device__ __forceinline__ void rowPass(int s, const SampleSlot& slot, const float4 (&u)[C4])
    {
        const bool pend = pending != 0;
        float uvAcc = 0.0f, wuAcc = 0.0f;   // warp 0: partial sums over this block's rows
        float acc[4];

        // After each group: warp-reduce its 4 row sums into the ring; after every 8 groups (and the
        // last), one __syncthreads and warp 0 finishes those rows (sum over warps in a fixed order).
        auto finishGroup = [&](int g) {
            const float s4 = warpReduceFour(acc, lane);
            const int half = (g >> 3) & 1, at = g & 7;
            if ((lane & 7) == 0)
                ring[((half * 8 + at) * W + warp) * 4 + (lane >> 3)] = s4;
            if (at == 7 || g == G - 1) {
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
                            vPub[slot.parity * R + local] = sum;
                        else
                            publish(slot.vOut + gi, sum, slot.tag);
                        uvAcc = fmaf(ui, sum, uvAcc);
                        wuAcc = fmaf(wRows[local], ui, wuAcc);
                    }
                }
            }
        };
        forEachGroup<true>(
            [&](float4 (&tile)[4][C4], int g) {
                float vRow[4];
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    vRow[k] = vRows[g * 4 + k];
                updateTile<C4>(tile, vRow, v, u, pend, pendingR, p.invLambda, acc);
                return pend;
            },
            finishGroup);

        if (warp == 0) {
            uvAcc = warpSum(uvAcc);
            wuAcc = warpSum(wuAcc);
            if (lane == 0) {
                if constexpr (kCluster) {
                    partPub[2 * slot.parity] = uvAcc;
                    partPub[2 * slot.parity + 1] = wuAcc;
                } else {
                    publish(slot.partOut + 2 * slice, uvAcc, slot.tag);
                    publish(slot.partOut + 2 * slice + 1, wuAcc, slot.tag);
                }
            }
        }
    }

    // ---- B: the one exchange of the sample: every block's v(n) for this thread's columns ----
    __device__ __forceinline__ void exchange(int s, const SampleSlot& slot)
    {
        if constexpr (kCluster) {
            // From the owner's shared memory: 4 columns of a float4 belong to one block (R is a multiple
            // of 4), so one 16-byte DSMEM load each.
            clusterSync();
#pragma unroll
            for (int c = 0; c < C4; ++c) {
                const int j = 4 * (tid + c * T);
                if (j < K * R) {
                    const float* owner = clusterSharedOf(vPub + slot.parity * R, static_cast<unsigned int>(j / R));
                    v[c] = *reinterpret_cast<const float4*>(owner + j % R);
                } else {
                    v[c] = make_float4(0.f, 0.f, 0.f, 0.f); // never published in the grid variant either
                }
            }
        } else {
            if (p.counterBarrier && K > 1)
                groupBarrier(p.barrier + channel, static_cast<unsigned int>((s + 1) * K));
            // Needed if the sample updates; collected in any case, it is the synchronisation that keeps
            // the double buffers safe.
            unsigned long long* words[4 * C4];
            bool active[4 * C4];
            float values[4 * C4];
#pragma unroll
            for (int i = 0; i < 4 * C4; ++i) {
                const int j = 4 * (tid + (i / 4) * T) + (i % 4);
                active[i] = j < K * R; // columns past the last row are never published (v_j = 0 there)
                words[i] = slot.vOut + (active[i] ? j : 0);
            }
            collectWords<4 * C4>(words, active, slot.tag, values);
#pragma unroll
            for (int i = 0; i < 4 * C4; ++i)
                component(v[i / 4], i % 4) = values[i];
        }
    }

    // ---- C: the sample's scalars and decision (warp 0; identical in every block) ----
    __device__ __forceinline__ void decide(int s, const SampleSlot& slot, const SampleInputs& in)
    {
        if (warp != 0)
            return;
        // Lane l sums blocks l, l + 32, ... (at most kMaxBlocksPerChannel / 32 of them), in that order.
        constexpr int M = 2 * (kMaxBlocksPerChannel / 32);
        float values[M];
        if constexpr (kCluster) { // the same values in the same lanes as the grid variant
#pragma unroll
            for (int i = 0; i < M; ++i) {
                const int b = lane + 32 * (i / 2);
                values[i] = b < K ? clusterSharedOf(partPub + 2 * slot.parity, static_cast<unsigned int>(b))[i % 2]
                                  : 0.0f;
            }
        } else {
            unsigned long long* words[M];
            bool active[M];
#pragma unroll
            for (int i = 0; i < M; ++i) {
                const int b = lane + 32 * (i / 2);
                active[i] = b < K;
                words[i] = slot.partOut + 2 * (active[i] ? b : 0) + (i % 2);
            }
            collectWords<M>(words, active, slot.tag, values);
        }
        float uv = 0.0f, wu = 0.0f;
#pragma unroll
        for (int i = 0; i < M; i += 2) {
            uv += values[i];
            wu += values[i + 1];
        }
        uv = warpSum(uv);
        wu = warpSum(wu);
        if (lane != 0)
            return;
        bool bad = !isfinite(in.d) || !isfinite(in.x0);
        {
            const double xIn = sanitised(in.x0), xOut = sanitised(in.leaving0);
            uEnergy += xIn * xIn - xOut * xOut;
        }
        if constexpr (INPUTS > 1) { // input after input, as the CPU twin
            bad = bad || !isfinite(in.x1);
            const double xIn = sanitised(in.x1), xOut = sanitised(in.leaving1);
            uEnergy += xIn * xIn - xOut * xOut;
        }
        if (bad)
            ++sanitisedCount;
        const float d = sanitised(in.d);
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
            const float alpha = __fadd_rn(p.lambda, uv);
            if (!(alpha >= __fmul_rn(0.5f, p.lambda)) || !isfinite(alpha) || !isfinite(e)) {
                ++reinits;
                dec.action = isfinite(e) ? 2 : 3;
                result = isfinite(e) ? e : d;
            } else {
                dec.action = 1;
                dec.r = __fdiv_rn(1.0f, alpha);
                dec.g = __fmul_rn(e, dec.r);
            }
        }
        decision_ = dec;
        if (writer)
            out[s] = result;
    }

    // ---- D: w of this block's rows, or the restart of its rows of P ----
    __device__ __forceinline__ void apply()
    {
        const SampleDecision dec = decision_;
        if (dec.action == 1) {
            for (int i = tid; i < R; i += T)
                wRows[i] = __fadd_rn(wRows[i], __fmul_rn(dec.g, vRows[i]));
            pending = 1;
            pendingR = dec.r;
            return;
        }
        pending = 0;
        if (dec.action < 2)
            return;
        // P = I / delta for this block's rows; w kept unless e was not finite.
        forEachGroup<false>(
            [&](float4 (&tile)[4][C4], int g) {
#pragma unroll
                for (int k = 0; k < 4; ++k)
#pragma unroll
                    for (int c = 0; c < C4; ++c) {
                        float4 t = make_float4(0.f, 0.f, 0.f, 0.f);
                        const int gi = row0 + g * 4 + k;
#pragma unroll
                        for (int q = 0; q < 4; ++q)
                            if (gi < N && 4 * (tid + c * T) + q == gi)
                                component(t, q) = p.diag;
                        tile[k][c] = t;
                    }
                return true;
            },
            [](int) {});
        if (dec.action == 3)
            for (int i = tid; i < R; i += T)
                wRows[i] = 0.0f;
    }

    const KernelParams& p;
    SampleDecision& decision_;
    int T, tid, lane, warp, W, K, R, G, N, channel, slice, row0, SG, rowStride4;
    bool writer;
    float4* sharedP;
    float *ring, *vRows, *wRows, *vPub, *partPub, *wHome, *out;
    float4* pHome;
    unsigned long long *vBase, *partials;
    const float *win, *mic;
    ChannelState* st;

    // The channel's scalars (ChannelState), in registers during the launch.
    int pending, sinceResum;
    float pendingR;
    unsigned long long done, reinits, paused, sanitisedCount;
    double uEnergy;

    float4 regP[RG > 0 ? RG : 1][4][C4];   // this block's first RG row groups of P
    float4 v[C4];                           // v of the last sample, this thread's columns
    int uShift[C4];
};

template <int C4, int RG, bool kCluster, int INPUTS>
__global__ void __launch_bounds__(kMaxThreads, 1) persistentRlsKernel(const KernelParams p)
{
    extern __shared__ float4 dynamicShared[];
    __shared__ SampleDecision decision;
    PersistentRlsBlock<C4, RG, kCluster, INPUTS> block(p, dynamicShared, decision);
    block.begin();
    for (int s = 0; s < p.samples; ++s)
        block.step(s);
    block.end();
}

} // namespace quell::gpu::rls
