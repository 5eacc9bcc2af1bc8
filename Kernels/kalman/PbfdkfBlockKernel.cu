// SPDX-License-Identifier: GPL-3.0-or-later
#include "kalman/PbfdkfBlockKernel.cuh"

#include <cmath>

#include "common/CudaCheck.cuh"
#include "dsp/PbfdkfSettings.h"
#include "kalman/SharedMemoryFft.cuh"

namespace quell::gpu::kalman {
namespace {

struct SharedLayout {
    float2* twiddles;   // M / 2
    float2* work;       // M: the transform in progress
    float2* error;      // B + 1: the error's spectrum
    float* denominator; // B + 1
    float* mic;         // B: the block's microphone samples (sanitised)
    float* residual;    // B: the block's error samples
    double* sums;       // 2 x warps: the block's far-end and microphone energies
    int* firstDiverged; // the first sample whose error was not finite (B: none)
};

__device__ SharedLayout carve(unsigned char* raw, const BatchGeometry& g)
{
    SharedLayout s;
    double* sums = reinterpret_cast<double*>(raw);
    s.sums = sums;
    s.twiddles = reinterpret_cast<float2*>(sums + 64);
    s.work = s.twiddles + g.bins / 2;
    s.error = s.work + g.bins;
    s.denominator = reinterpret_cast<float*>(s.error + g.halfBins);
    s.mic = s.denominator + g.halfBins;
    s.residual = s.mic + g.block;
    s.firstDiverged = reinterpret_cast<int*>(s.residual + g.block);
    return s;
}

// Sum over the thread block, in double (the CPU's energies are double); every thread gets the result.
__device__ double blockSum(double value, double* scratch)
{
    for (int o = 16; o > 0; o >>= 1)
        value += __shfl_down_sync(0xffffffffu, value, o);
    const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
    const int warps = (static_cast<int>(blockDim.x) + 31) >> 5;
    __syncthreads();
    if (lane == 0)
        scratch[warp] = value;
    __syncthreads();
    double total = 0.0;
    for (int w = 0; w < warps; ++w)
        total += scratch[w];
    __syncthreads();
    return total;
}

__device__ __forceinline__ float sanitised(float v, unsigned& count)
{
    if (isfinite(v))
        return v;
    ++count;
    return 0.0f;
}

// The half spectrum h (B + 1 bins of a real signal's transform) written in full, bit-reversed, into work.
__device__ __forceinline__ void writeHermitian(float2* work, int f, float2 value, const BatchGeometry& g)
{
    work[bitReversed(f, g.log2Bins)] = value;
    if (f > 0 && f < g.block)
        work[bitReversed(g.bins - f, g.log2Bins)] = cconj(value);
}

__global__ void __launch_bounds__(256) pbfdkfBlockKernel(BatchGeometry g, BatchState state, BatchSchedule schedule, BlockIo io)
{
    extern __shared__ __align__(16) unsigned char raw[];
    const SharedLayout sh = carve(raw, g);
    const int stream = static_cast<int>(blockIdx.x);
    const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
    const int B = g.block, M = g.bins, H = g.halfBins, P = g.partitions;
    const std::size_t partitionStride = static_cast<std::size_t>(H);
    const std::size_t streamStride = static_cast<std::size_t>(P) * partitionStride;
    float2* spectra = state.spectra + static_cast<std::size_t>(stream) * streamStride;
    float2* weights = state.weights + static_cast<std::size_t>(stream) * streamStride;
    float* uncertainty = state.uncertainty + static_cast<std::size_t>(stream) * streamStride;
    float* previous = state.previousRef + static_cast<std::size_t>(stream) * static_cast<std::size_t>(B);
    StreamScalars& scalars = state.scalars[stream];
    const float* mic = io.mic + static_cast<std::size_t>(stream) * io.stride + io.offset;
    const float* ref = io.ref + static_cast<std::size_t>(stream) * io.stride + io.offset;
    float* out = io.out + static_cast<std::size_t>(stream) * io.stride + io.offset;
    if (io.held != nullptr && io.held[stream] != 0) {
        // The batch's ring moves on by one slot; the stream's stays where it was.
        if (tid == 0)
            scalars.ringShift = (scalars.ringShift + 1) % P;
        return;
    }
    // The ring slot p blocks ago (every thread reads the shift before any writes the scalars).
    const int ring = io.newest + scalars.ringShift;
    auto slot = [&](int p) { return spectra + static_cast<std::size_t>((ring + p) % P) * partitionStride; };

    fillTwiddles(sh.twiddles, M);
    if (tid == 0)
        *sh.firstDiverged = B;

    // The far-end window [previous block, this block] into the transform; the block becomes the previous.
    unsigned sanitisedHere = 0;
    double farEnergy = 0.0, micEnergy = 0.0;
    for (int n = tid; n < B; n += threads) {
        const float x = sanitised(ref[n], sanitisedHere);
        const float d = sanitised(mic[n], sanitisedHere);
        sh.work[bitReversed(n, g.log2Bins)] = make_float2(previous[n], 0.0f);
        sh.work[bitReversed(B + n, g.log2Bins)] = make_float2(x, 0.0f);
        previous[n] = x;
        sh.mic[n] = d;
        farEnergy += static_cast<double>(x) * x;
        micEnergy += static_cast<double>(d) * d;
    }
    sharedFft(sh.work, sh.twiddles, M, g.log2Bins, false);
    float2* newest = slot(0);
    for (int f = tid; f < H; f += threads)
        newest[f] = sh.work[f];
    __syncthreads();

    // The block's output with the weights of the block before (overlap-save: the window's second half).
    for (int f = tid; f < H; f += threads) {
        float2 y = make_float2(0.0f, 0.0f);
        for (int p = 0; p < P; ++p) {
            const float2 xw = cmul(slot(p)[f], weights[static_cast<std::size_t>(p) * partitionStride + f]);
            y.x += xw.x;
            y.y += xw.y;
        }
        writeHermitian(sh.work, f, y, g);
    }
    sharedFft(sh.work, sh.twiddles, M, g.log2Bins, true);
    for (int n = tid; n < B; n += threads) {
        const float e = sh.mic[n] - sh.work[B + n].x;
        sh.residual[n] = e;
        if (!isfinite(e))
            atomicMin(sh.firstDiverged, n);
    }
    __syncthreads();
    const int diverged = *sh.firstDiverged;
    for (int n = tid; n < B; n += threads) {
        // From a non-finite error on, the CPU's filter starts again from zero weights: e = d.
        if (n >= diverged)
            sh.residual[n] = sh.mic[n];
        out[n] = sh.residual[n];
    }
    if (sanitisedHere != 0)
        atomicAdd(&scalars.sanitisedSamples, static_cast<unsigned long long>(sanitisedHere));
    if (diverged < B) {
        for (int i = tid; i < static_cast<int>(streamStride); i += threads) {
            weights[i] = make_float2(0.0f, 0.0f);
            uncertainty[i] = 0.0f;
        }
        if (tid == 0) {
            ++scalars.reinitialisations;
            scalars.adaptedBlocks = 0;
            scalars.pending = 1;
        }
    }
    farEnergy = blockSum(farEnergy, sh.sums);
    micEnergy = blockSum(micEnergy, sh.sums + 32);   // (blockSum ends with a barrier: scalars are settled)

    if (io.adapting != nullptr && io.adapting[stream] == 0) {
        if (tid == 0)
            scalars.pausedSamples += static_cast<unsigned long long>(B);
        return;
    }
    float cap = static_cast<float>(scalars.uncertaintyCap);
    if (scalars.pending != 0) {
        // Phi(0) from the far end's first active stretch of kPriorMeasureSamples, as the CPU measures it
        // (an inactive block ends a stretch; every thread reads the scalars before thread 0 writes them).
        const bool active = farEnergy > 1e-6 * static_cast<double>(B);
        const double stretchFar = scalars.priorFarEnergy + farEnergy, stretchMic = scalars.priorMicEnergy + micEnergy;
        const int stretchSamples = scalars.priorSamples + B;
        if (!active || stretchSamples < dsp::kPriorMeasureSamples) {
            __syncthreads();
            if (tid == 0) {
                scalars.priorFarEnergy = active ? stretchFar : 0.0;
                scalars.priorMicEnergy = active ? stretchMic : 0.0;
                scalars.priorSamples = active ? stretchSamples : 0;
            }
            return;
        }
        const double first = schedule.uncertaintyScale * (stretchMic / stretchFar);
        for (int p = 0; p < P; ++p) {
            const float value = static_cast<float>(first * state.priorProfile[p]);
            for (int f = tid; f < H; f += threads)
                uncertainty[static_cast<std::size_t>(p) * partitionStride + f] = value;
        }
        cap = static_cast<float>(first * state.priorProfile[0]);
        __syncthreads();   // every thread has read the scalars before thread 0 writes them
        if (tid == 0) {
            scalars.uncertaintyCap = first * state.priorProfile[0];
            scalars.pending = 0;
            scalars.priorSamples = 0;
            scalars.priorFarEnergy = scalars.priorMicEnergy = 0.0;
        }
    }

    // The error's spectrum: the block's errors in the window's second half.
    for (int n = tid; n < B; n += threads) {
        sh.work[bitReversed(n, g.log2Bins)] = make_float2(0.0f, 0.0f);
        sh.work[bitReversed(B + n, g.log2Bins)] = make_float2(sh.residual[n], 0.0f);
    }
    sharedFft(sh.work, sh.twiddles, M, g.log2Bins, false);
    for (int f = tid; f < H; f += threads) {
        const float2 e = sh.work[f];
        sh.error[f] = e;
        float den = cnorm(e) + 1e-30f;
        for (int p = 0; p < P; ++p)
            den += schedule.residualWeight * uncertainty[static_cast<std::size_t>(p) * partitionStride + f] * cnorm(slot(p)[f]);
        sh.denominator[f] = den;
    }

    double noise = schedule.firstNoise;
    if (schedule.growthBlocks > 0.0)
        noise = fmax(schedule.lastNoise, schedule.firstNoise / (1.0 + static_cast<double>(scalars.adaptedBlocks) / schedule.growthBlocks));
    const float a2 = static_cast<float>(1.0 - noise);
    __syncthreads();
    if (tid == 0)
        ++scalars.adaptedBlocks;

    for (int p = 0; p < P; p += 2) {
        const int q = p + 1;
        const bool pair = q < P;
        // The gradients of p and q as one complex spectrum Z = G_p + i G_q (both time signals are real).
        __syncthreads();
        for (int f = tid; f < H; f += threads) {
            const float2 e = sh.error[f];
            const float den = sh.denominator[f];
            const float2 xp = slot(p)[f];
            const float2 gp = cmul(cconj(xp), e);
            const float sp = uncertainty[static_cast<std::size_t>(p) * partitionStride + f] / den;
            float2 gq = make_float2(0.0f, 0.0f);
            float sq = 0.0f;
            if (pair) {
                gq = cmul(cconj(slot(q)[f]), e);
                sq = uncertainty[static_cast<std::size_t>(q) * partitionStride + f] / den;
            }
            const float2 a = make_float2(sp * gp.x, sp * gp.y), b = make_float2(sq * gq.x, sq * gq.y);
            sh.work[bitReversed(f, g.log2Bins)] = make_float2(a.x - b.y, a.y + b.x);
            if (f > 0 && f < B)
                sh.work[bitReversed(M - f, g.log2Bins)] = make_float2(a.x + b.y, b.x - a.y);
        }
        sharedFft(sh.work, sh.twiddles, M, g.log2Bins, true);
        // The constraint: each partition's update keeps its first B taps (fewer where the filter ends), and
        // the result goes back to bit-reversed order for the forward transform, a pair swap per thread.
        const int validP = min(B, g.taps - p * B);
        const int validQ = pair ? min(B, g.taps - q * B) : 0;
        for (int t = tid; t < M; t += threads) {
            const int r = bitReversed(t, g.log2Bins);
            if (r < t)
                continue;
            float2 vt = sh.work[t], vr = sh.work[r];
            vt = make_float2(t < validP ? vt.x : 0.0f, t < validQ ? vt.y : 0.0f);
            vr = make_float2(r < validP ? vr.x : 0.0f, r < validQ ? vr.y : 0.0f);
            sh.work[r] = vt;
            sh.work[t] = vr;
        }
        sharedFft(sh.work, sh.twiddles, M, g.log2Bins, false);
        for (int f = tid; f < H; f += threads) {
            const float2 z = sh.work[f], zc = cconj(sh.work[(M - f) & (M - 1)]);
            const float den = sh.denominator[f];
            const float2 update[2] = {make_float2(0.5f * (z.x + zc.x), 0.5f * (z.y + zc.y)),
                                      make_float2(0.5f * (z.y - zc.y), -0.5f * (z.x - zc.x))};
            for (int k = 0; k < (pair ? 2 : 1); ++k) {
                const std::size_t at = static_cast<std::size_t>(p + k) * partitionStride + f;
                float2 w = weights[at];
                w.x += update[k].x;
                w.y += update[k].y;
                weights[at] = w;
                const float phi = uncertainty[at];
                const float gain = 0.5f * phi * cnorm(slot(p + k)[f]) / den;
                uncertainty[at] = fminf(a2 * (1.0f - gain) * phi + (1.0f - a2) * cnorm(w), cap);
            }
        }
    }
}

} // namespace

std::size_t blockKernelSharedBytes(const BatchGeometry& g)
{
    return 64 * sizeof(double) + static_cast<std::size_t>(g.bins / 2 + g.bins + g.halfBins) * sizeof(float2)
           + static_cast<std::size_t>(g.halfBins + 2 * g.block) * sizeof(float) + sizeof(int);
}

void launchBlock(const BatchGeometry& g, const BatchState& state, const BatchSchedule& schedule, const BlockIo& io,
                 int threadsPerStream, cudaStream_t stream)
{
    if (g.streams == 0)
        return;
    pbfdkfBlockKernel<<<g.streams, threadsPerStream, blockKernelSharedBytes(g), stream>>>(g, state, schedule, io);
    QUELL_CUDA_CHECK_LAUNCH();
}

} // namespace quell::gpu::kalman
