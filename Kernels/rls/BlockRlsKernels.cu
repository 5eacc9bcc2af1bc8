// SPDX-License-Identifier: GPL-3.0-or-later
// The stages of one block of the block-exact RLS (BlockRlsKernels.cuh). A first version: each stage is
// a plain kernel, correct against the CPU twin; Kernels/rls/NOTES.md says what each costs.
#include "rls/BlockRlsKernels.cuh"

#include "common/CudaCheck.cuh"

namespace quell::gpu::blockrls {
namespace {

constexpr int kThreads = 256;
constexpr int kRowsPerTile = 8;    // rows of P per block in computeV
constexpr int kTileColumns = 256;  // columns of P per pass in computeV

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

__global__ void buildColumnsKernel(Geometry g, Buffers b, const float* history, const float* mic, int t0, int begin,
                                   bool adapting, double silenceEnergy)
{
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
        if (j == 0)
            b.state->traceP0 = 0.0;
    }
}

// One thread per 4 x 4 elements of P (4 rows, 4 consecutive columns): each z_l load serves 16 fused
// multiply-adds. P has stride rows (the padding rows and columns stay zero: Z is zero there).
__global__ void startBlockKernel(Geometry g, Buffers b, float invDelta)
{
    const int groups = g.stride / 4;
    const std::size_t index = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int row0 = static_cast<int>(index / static_cast<std::size_t>(groups)) * 4;
    const int column = static_cast<int>(index % static_cast<std::size_t>(groups)) * 4;
    if (row0 >= g.taps)
        return;
    const int reinit = b.state->reinitP, pending = b.state->pending;
    const bool diagonal = row0 == column;
    if (!reinit && !pending) {
        if (diagonal)
            for (int r = 0; r < 4 && row0 + r < g.taps; ++r)
                atomicAdd(&b.state->traceP0, static_cast<double>(b.P[at(row0 + r, g.stride, row0 + r)]));
        return;
    }
    float4 p[4];
    if (reinit) {
        for (int r = 0; r < 4; ++r) {
            p[r] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (diagonal && row0 + r < g.taps)
                reinterpret_cast<float*>(&p[r])[r] = invDelta;
        }
    } else {
        for (int r = 0; r < 4; ++r)
            p[r] = *reinterpret_cast<const float4*>(b.P + at(row0 + r, g.stride, column));
        const int count = b.state->pendingCount;
        const float mu = b.state->pendingMu;
        // fma(-z_il, z_jl, p): the exact product is symmetric in i and j, so P stays exactly symmetric.
        for (int l = 0; l < count; ++l) {
            const float4 zr = *reinterpret_cast<const float4*>(b.Z + at(l, g.stride, row0));
            const float4 zc = *reinterpret_cast<const float4*>(b.Z + at(l, g.stride, column));
            const float zi[4] = {zr.x, zr.y, zr.z, zr.w};
            for (int r = 0; r < 4; ++r) {
                p[r].x = fmaf(-zi[r], zc.x, p[r].x);
                p[r].y = fmaf(-zi[r], zc.y, p[r].y);
                p[r].z = fmaf(-zi[r], zc.z, p[r].z);
                p[r].w = fmaf(-zi[r], zc.w, p[r].w);
            }
        }
        for (int r = 0; r < 4; ++r) {
            p[r].x *= mu;
            p[r].y *= mu;
            p[r].z *= mu;
            p[r].w *= mu;
        }
    }
    for (int r = 0; r < 4; ++r)
        *reinterpret_cast<float4*>(b.P + at(row0 + r, g.stride, column)) = p[r];
    if (diagonal)
        for (int r = 0; r < 4 && row0 + r < g.taps; ++r)
            atomicAdd(&b.state->traceP0, static_cast<double>(reinterpret_cast<const float*>(&p[r])[r]));
}

// kRowsPerTile rows of P per block, staged through shared memory kTileColumns at a time; each warp owns
// a fixed set of (row, column) outputs, so every V element is summed in the same order whatever `count`.
__global__ void computeVKernel(Geometry g, Buffers b, int begin, int count)
{
    extern __shared__ float shared[];
    float* tile = shared;
    float* acc = shared + kRowsPerTile * kTileColumns;
    const int row0 = static_cast<int>(blockIdx.x) * kRowsPerTile;
    const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31), warps = kThreads / 32;
    const int outputs = kRowsPerTile * count;
    for (int o = static_cast<int>(threadIdx.x); o < outputs; o += kThreads)
        acc[o] = 0.0f;
    for (int c0 = 0; c0 < g.stride; c0 += kTileColumns) {
        __syncthreads();
        for (int r = 0; r < kRowsPerTile; ++r) {
            const int row = row0 + r, c = c0 + static_cast<int>(threadIdx.x);
            tile[r * kTileColumns + static_cast<int>(threadIdx.x)] = (row < g.taps && c < g.stride) ? b.P[at(row, g.stride, c)] : 0.0f;
        }
        __syncthreads();
        const int width = min(kTileColumns, g.stride - c0);
        for (int o = warp; o < outputs; o += warps) {
            const int r = o / count, j = begin + o % count;
            const float* u = b.U + at(j, g.stride, c0);
            float sum = 0.0f;
            for (int c = lane; c < width; c += 32)
                sum = fmaf(tile[r * kTileColumns + c], u[c], sum);
            for (int offset = 16; offset > 0; offset >>= 1)
                sum += __shfl_down_sync(0xffffffffu, sum, offset);
            if (lane == 0)
                acc[o] += sum;
        }
    }
    __syncthreads();
    for (int o = static_cast<int>(threadIdx.x); o < outputs; o += kThreads) {
        const int row = row0 + o / count;
        if (row < g.taps)
            b.V[at(begin + o % count, g.stride, row)] = acc[o];
    }
}

// Block (x, y): G(j, a) and H(j, a) for j = begin + x, a = y <= j.
__global__ void computeGramKernel(Geometry g, Buffers b, int begin)
{
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

__device__ double lowerAt(const double* m, int k, int a, int c)
{
    return a >= c ? m[at(a, k, c)] : m[at(c, k, a)];
}

// The recurrence keeps A, b, s, the block's G rows (and H at a trace check) and its per-step inputs in
// shared memory up to this k (3 k^2 doubles: 96 KiB at k = 64); above it A, G and H stay in global
// memory (slower, same results).
constexpr int kSharedRecurrenceBlock = 64;

std::size_t recurrenceSharedBytes(int k)
{
    const std::size_t kk = static_cast<std::size_t>(k);
    const std::size_t squares = k <= kSharedRecurrenceBlock ? 3 * kk * kk : 0;
    return (squares + 6 * kk + kThreads / 32) * sizeof(double);
}

// One block of kThreads; the k-step recurrence of dsp::BlockRls::step, in float64. A is symmetric, so
// (A g)_a is read down column a (consecutive threads, consecutive addresses).
__global__ void recurrenceKernel(Geometry g, Buffers b, int begin, int end, int checkStep, double lambda, double traceBound,
                                 float* out)
{
    extern __shared__ double sharedD[];
    const int k = g.block;
    const bool local = k <= kSharedRecurrenceBlock;
    const std::size_t kk = static_cast<std::size_t>(k);
    double* A = local ? sharedD : b.A;
    double* G = local ? sharedD + kk * kk : b.G;
    double* H = local ? sharedD + 2 * kk * kk : b.H;
    double* tail = sharedD + (local ? 3 * kk * kk : 0);
    double* gs = tail;
    double* cs = tail + kk;
    double* bv = tail + 2 * kk;
    double* sv = tail + 3 * kk;
    double* dy = tail + 4 * kk;       // d_j - y0_j
    double* held = tail + 5 * kk;     // 1: paused
    double* scratch = tail + 6 * kk;
    const int t = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
    State* st = b.state;
    const bool fresh = begin == 0; // a new block: the deferred update was applied by startBlock
    for (int i = t; i < k * k; i += threads) {
        if (local)
            A[i] = fresh ? 0.0 : b.A[i];
        else if (fresh)
            A[i] = 0.0;
        if (fresh)
            b.C[i] = 0.0;
    }
    if (local)
        for (int i = t; i < end * k; i += threads)
            G[i] = b.G[i];
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
            if (local) {
                for (int i = t; i < j * k; i += threads)
                    H[i] = b.H[i];
                __syncthreads();
            }
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
            lambdaNow = mu * (st->traceP0 - q) > traceBound ? 1.0 : lambda;
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
    if (local)
        for (int i = t; i < k * k; i += threads)
            b.A[i] = A[i];
    if (t == 0) {
        st->mu = mu;
        st->lambdaNow = lambdaNow;
        st->restartDue = restartDue;
        st->pausedSamples += paused;
        st->reinitialisations += reinits;
    }
}

// Thread (i, y): for y < steps the deferred update's z_y(i) = sqrt(s_y) (V c_y)_i, stored at the index
// of y among the steps that adapted; for y == steps (the last row of the grid) w0_i (+)= (V b)_i. With
// weightsOut, only w0 + V b into weightsOut (the grid has that one row).
__global__ void finishBlockKernel(Geometry g, Buffers b, int steps, bool restart, float* weightsOut)
{
    __shared__ int slot;
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
    if (restart || st.restartDue || !(sl > 0.0))
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
__global__ void finishFlagsKernel(Buffers b, int steps, bool restart)
{
    State& st = *b.state;
    int count = 0;
    for (int l = 0; l < steps; ++l)
        count += b.s[l] > 0.0 ? 1 : 0;
    if (restart || st.restartDue) {
        st.reinitP = 1;
        st.pending = 0;
        st.pendingCount = 0;
    } else {
        st.pendingCount = count;
        st.pendingMu = static_cast<float>(st.mu);
        st.pending = (count > 0 || st.mu != 1.0) ? 1 : 0;
    }
    st.restartDue = 0;
    st.zeroW = 0;
    st.mu = 1.0;
}

unsigned blocksFor(std::size_t items, int threads) { return static_cast<unsigned>((items + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads)); }

} // namespace

void buildColumns(const Geometry& g, const Buffers& b, const float* history, const float* mic, int t0, int begin, int end,
                  bool adapting, double silenceEnergy, cudaStream_t stream)
{
    buildColumnsKernel<<<static_cast<unsigned>(end - begin), kThreads, 0, stream>>>(g, b, history, mic, t0, begin, adapting,
                                                                                    silenceEnergy);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void startBlock(const Geometry& g, const Buffers& b, float invDelta, cudaStream_t stream)
{
    const std::size_t items = static_cast<std::size_t>((g.taps + 3) / 4) * static_cast<std::size_t>(g.stride / 4);
    startBlockKernel<<<blocksFor(items, kThreads), kThreads, 0, stream>>>(g, b, invDelta);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void computeV(const Geometry& g, const Buffers& b, int begin, int end, cudaStream_t stream)
{
    const int count = end - begin;
    const std::size_t smem = (static_cast<std::size_t>(kRowsPerTile) * kTileColumns + static_cast<std::size_t>(kRowsPerTile) * count) * sizeof(float);
    computeVKernel<<<blocksFor(static_cast<std::size_t>(g.taps), kRowsPerTile), kThreads, smem, stream>>>(g, b, begin, count);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void computeGram(const Geometry& g, const Buffers& b, int begin, int end, cudaStream_t stream)
{
    computeGramKernel<<<dim3(static_cast<unsigned>(end - begin), static_cast<unsigned>(end)), kThreads, 0, stream>>>(g, b, begin);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void recurrence(const Geometry& g, const Buffers& b, int begin, int end, int checkStep, double lambda, double traceBound,
                float* out, cudaStream_t stream)
{
    const std::size_t smem = recurrenceSharedBytes(g.block);
    static const bool attributeSet = [] {
        QUELL_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(recurrenceKernel),
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(recurrenceSharedBytes(kSharedRecurrenceBlock))));
        return true;
    }();
    (void)attributeSet;
    recurrenceKernel<<<1, kThreads, smem, stream>>>(g, b, begin, end, checkStep, lambda, traceBound, out);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void finishBlock(const Geometry& g, const Buffers& b, int steps, bool restart, cudaStream_t stream)
{
    const dim3 grid(blocksFor(static_cast<std::size_t>(g.taps), kThreads), static_cast<unsigned>(steps + 1));
    finishBlockKernel<<<grid, kThreads, 0, stream>>>(g, b, steps, restart, nullptr);
    QUELL_CUDA_CHECK(cudaGetLastError());
    finishFlagsKernel<<<1, 1, 0, stream>>>(b, steps, restart);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

void currentWeights(const Geometry& g, const Buffers& b, int steps, float* out, cudaStream_t stream)
{
    finishBlockKernel<<<blocksFor(static_cast<std::size_t>(g.taps), kThreads), kThreads, 0, stream>>>(g, b, steps, false, out);
    QUELL_CUDA_CHECK(cudaGetLastError());
}

} // namespace quell::gpu::blockrls
