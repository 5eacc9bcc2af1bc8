// SPDX-License-Identifier: GPL-3.0-or-later
#include "kalman/PbfdkfStreamKernels.cuh"

#include "common/CudaCheck.cuh"
#include "kalman/SharedMemoryFft.cuh"

namespace quell::gpu::kalman {
namespace {

__global__ void streamControlKernel(BatchGeometry g, BatchState state, const unsigned char* controls)
{
    const int stream = static_cast<int>(blockIdx.x);
    const unsigned char control = controls[stream];
    if (control == GpuBatchedPbfdkf::Keep)
        return;
    const std::size_t perStream = static_cast<std::size_t>(g.partitions) * static_cast<std::size_t>(g.halfBins);
    const std::size_t first = static_cast<std::size_t>(stream) * perStream;
    // Both forget the uncertainty; it is measured again on the next block with an active far end.
    for (std::size_t i = threadIdx.x; i < perStream; i += blockDim.x)
        state.uncertainty[first + i] = 0.0f;
    if (control == GpuBatchedPbfdkf::Reset) {
        for (std::size_t i = threadIdx.x; i < perStream; i += blockDim.x) {
            state.spectra[first + i] = make_float2(0.0f, 0.0f);
            state.weights[first + i] = make_float2(0.0f, 0.0f);
        }
        for (int n = static_cast<int>(threadIdx.x); n < g.block; n += static_cast<int>(blockDim.x))
            state.previousRef[static_cast<std::size_t>(stream) * static_cast<std::size_t>(g.block) + n] = 0.0f;
    }
    if (threadIdx.x == 0) {
        StreamScalars& s = state.scalars[stream];
        if (control == GpuBatchedPbfdkf::Reset)
            s = StreamScalars{};
        s.adaptedBlocks = 0;
        s.pending = 1;
        s.priorSamples = 0;
        s.priorFarEnergy = s.priorMicEnergy = 0.0;
    }
}

// Each pair of partitions' weight spectra, W_p + i W_q, back to time in one complex transform: the two
// taps sets are real, so they come out as the real and the imaginary parts.
__global__ void __launch_bounds__(256) weightTapsKernel(BatchGeometry g, BatchState state, float* taps)
{
    extern __shared__ __align__(16) unsigned char raw[];
    float2* twiddles = reinterpret_cast<float2*>(raw);
    float2* work = twiddles + g.bins / 2;
    const int stream = static_cast<int>(blockIdx.x);
    const int tid = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
    const int B = g.block, M = g.bins, H = g.halfBins, P = g.partitions;
    const float2* weights = state.weights + static_cast<std::size_t>(stream) * static_cast<std::size_t>(P) * static_cast<std::size_t>(H);
    float* out = taps + static_cast<std::size_t>(stream) * static_cast<std::size_t>(g.taps);
    fillTwiddles(twiddles, M);
    for (int p = 0; p < P; p += 2) {
        const int q = p + 1;
        const bool pair = q < P;
        __syncthreads();   // the last pair's taps are read out of work
        for (int f = tid; f < H; f += threads) {
            const float2 wp = weights[static_cast<std::size_t>(p) * H + f];
            const float2 wq = pair ? weights[static_cast<std::size_t>(q) * H + f] : make_float2(0.0f, 0.0f);
            // Z(f) = W_p(f) + i W_q(f); Z(M - f) = conj(W_p(f)) + i conj(W_q(f)).
            work[bitReversed(f, g.log2Bins)] = make_float2(wp.x - wq.y, wp.y + wq.x);
            if (f > 0 && f < B)
                work[bitReversed(M - f, g.log2Bins)] = make_float2(wp.x + wq.y, wq.x - wp.y);
        }
        sharedFft(work, twiddles, M, g.log2Bins, true);
        const int validP = min(B, g.taps - p * B);
        const int validQ = pair ? min(B, g.taps - q * B) : 0;
        for (int t = tid; t < validP; t += threads)
            out[p * B + t] = work[t].x;
        for (int t = tid; t < validQ; t += threads)
            out[q * B + t] = work[t].y;
    }
}

} // namespace

void launchStreamControls(const BatchGeometry& g, const BatchState& state, const unsigned char* controls, cudaStream_t stream)
{
    if (g.streams == 0)
        return;
    streamControlKernel<<<g.streams, 128, 0, stream>>>(g, state, controls);
    QUELL_CUDA_CHECK_LAUNCH();
}

void launchWeightTaps(const BatchGeometry& g, const BatchState& state, float* taps, int threadsPerStream, cudaStream_t stream)
{
    if (g.streams == 0)
        return;
    const std::size_t shared = static_cast<std::size_t>(g.bins / 2 + g.bins) * sizeof(float2);
    weightTapsKernel<<<g.streams, threadsPerStream, shared, stream>>>(g, state, taps);
    QUELL_CUDA_CHECK_LAUNCH();
}

} // namespace quell::gpu::kalman
