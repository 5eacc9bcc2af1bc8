// SPDX-License-Identifier: GPL-3.0-or-later
// Host side of the batched GPU Kalman filter: the device state of every stream, the ring position of the
// far-end spectra (the same for every stream: they all advance one block per launch), and the staging of
// a call's samples.
#include "kalman/GpuBatchedPbfdkf.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"
#include "kalman/PbfdkfBlockKernel.cuh"
#include "kalman/PbfdkfStreamKernels.cuh"

namespace quell::gpu {

namespace {

// Tuning in one place: threads per stream's thread block. One butterfly per thread and transform stage
// (B threads for M = 2B points), and at least a warp (the block's reductions are warp shuffles).
struct KalmanLaunchPolicy {
    static int threadsPerStream(int block) { return std::clamp(block, 32, 256); }
};

int log2Exact(int value)
{
    int log = 0;
    while ((1 << log) < value)
        ++log;
    return log;
}

} // namespace

struct GpuBatchedPbfdkf::Impl {
    dsp::PbfdkfSettings settings{};
    kalman::BatchGeometry geometry{};
    kalman::BatchSchedule schedule{};
    int maxBlocks = 0;
    int newest = 0;
    Stream stream{Stream::Highest{}};
    Event start, stop;
    DeviceBuffer<float2> spectra, weights;
    DeviceBuffer<float> uncertainty, previousRef, mic, ref, out;
    DeviceBuffer<double> priorProfile;
    DeviceBuffer<kalman::StreamScalars> scalars;
    DeviceBuffer<unsigned char> adapting, held, controls;
    PinnedBuffer<float> hostMic, hostRef, hostOut;   // one block of every stream (processBlock)
    // mirrorState(): every stream's taps and scalars after each call, on the device and here.
    bool mirroring = false;
    DeviceBuffer<float> taps;
    PinnedBuffer<float> hostTaps;
    PinnedBuffer<kalman::StreamScalars> hostScalars;
    double lastMs = 0.0;

    kalman::BatchState state() const
    {
        return {spectra.get(), weights.get(), uncertainty.get(), previousRef.get(), scalars.get(), priorProfile.get()};
    }
    // Every stream's taps and scalars into the pinned copies, queued on the object's stream.
    void queueMirror()
    {
        kalman::launchWeightTaps(geometry, state(), taps.get(), KalmanLaunchPolicy::threadsPerStream(geometry.block), stream.get());
        QUELL_CUDA_CHECK(cudaMemcpyAsync(hostTaps.get(), taps.get(), taps.bytes(), cudaMemcpyDeviceToHost, stream.get()));
        QUELL_CUDA_CHECK(cudaMemcpyAsync(hostScalars.get(), scalars.get(), scalars.bytes(), cudaMemcpyDeviceToHost, stream.get()));
    }
};

namespace {

dsp::RlsHealth healthOf(const kalman::StreamScalars& s)
{
    return {s.reinitialisations, s.pausedSamples, s.sanitisedSamples};
}

} // namespace

GpuBatchedPbfdkf::GpuBatchedPbfdkf() : impl_(std::make_unique<Impl>()) {}
GpuBatchedPbfdkf::~GpuBatchedPbfdkf() = default;

void GpuBatchedPbfdkf::prepare(const dsp::PbfdkfSettings& settings, int streams, int maxBlocksPerCall)
{
    dsp::validate(settings);
    if (settings.channels != 1)
        throw std::invalid_argument("GPU Kalman filter: one far-end channel per stream (got " + std::to_string(settings.channels) + ")");
    const int block = settings.blockSize != 0 ? settings.blockSize : dsp::automaticBlockSize(settings.taps);
    if (block > kMaxBlock)
        throw std::invalid_argument("GPU Kalman filter: block size at most " + std::to_string(kMaxBlock) + " (got " + std::to_string(block) + ")");
    if (streams < 1 || streams > (1 << 20))
        throw std::invalid_argument("GPU Kalman filter: 1 to 1048576 streams (got " + std::to_string(streams) + ")");
    if (maxBlocksPerCall < 1 || maxBlocksPerCall > 4096)
        throw std::invalid_argument("GPU Kalman filter: maxBlocksPerCall must be 1 to 4096 (got " + std::to_string(maxBlocksPerCall) + ")");
    Impl& m = *impl_;
    m.settings = settings;
    m.maxBlocks = maxBlocksPerCall;
    kalman::BatchGeometry& g = m.geometry;
    g.streams = streams;
    g.block = block;
    g.bins = 2 * block;
    g.log2Bins = log2Exact(g.bins);
    g.halfBins = block + 1;
    g.partitions = (settings.taps + block - 1) / block;
    g.taps = settings.taps;

    m.schedule.firstNoise = dsp::processNoisePerBlock(settings.transition, block);
    m.schedule.lastNoise = dsp::processNoisePerBlock(settings.finalTransition, block);
    m.schedule.growthBlocks = settings.transitionGrowthBlocks;
    m.schedule.uncertaintyScale = settings.uncertaintyScale;
    m.schedule.residualWeight = static_cast<float>(settings.residualWeight);

    // Phi(0)'s shape over the partitions, normalised by its sum (dsp::Pbfdkf::prepare's profile).
    std::vector<double> profile = dsp::uncertaintyProfile(settings, block, g.partitions);
    double sum = 0.0;
    for (const double v : profile)
        sum += v;
    for (double& v : profile)
        v /= sum;

    const std::size_t S = static_cast<std::size_t>(streams);
    const std::size_t perStream = static_cast<std::size_t>(g.partitions) * static_cast<std::size_t>(g.halfBins);
    const std::size_t chunk = S * static_cast<std::size_t>(maxBlocksPerCall) * static_cast<std::size_t>(block);
    m.spectra.allocate(S * perStream);
    m.weights.allocate(S * perStream);
    m.uncertainty.allocate(S * perStream);
    m.previousRef.allocate(S * static_cast<std::size_t>(block));
    m.scalars.allocate(S);
    m.adapting.allocate(S);
    m.held.allocate(S);
    m.controls.allocate(S);
    m.mirroring = false;
    m.mic.allocate(chunk);
    m.ref.allocate(chunk);
    m.out.allocate(chunk);
    m.priorProfile.allocate(profile.size());
    m.hostMic.allocate(S * static_cast<std::size_t>(block));
    m.hostRef.allocate(S * static_cast<std::size_t>(block));
    m.hostOut.allocate(S * static_cast<std::size_t>(block));
    QUELL_CUDA_CHECK(cudaMemcpyAsync(m.priorProfile.get(), profile.data(), profile.size() * sizeof(double), cudaMemcpyHostToDevice,
                                     m.stream.get()));
    reset();
}

void GpuBatchedPbfdkf::reset()
{
    Impl& m = *impl_;
    cudaStream_t s = m.stream.get();
    QUELL_CUDA_CHECK(cudaMemsetAsync(m.spectra.get(), 0, m.spectra.bytes(), s));
    QUELL_CUDA_CHECK(cudaMemsetAsync(m.weights.get(), 0, m.weights.bytes(), s));
    QUELL_CUDA_CHECK(cudaMemsetAsync(m.uncertainty.get(), 0, m.uncertainty.bytes(), s));
    QUELL_CUDA_CHECK(cudaMemsetAsync(m.previousRef.get(), 0, m.previousRef.bytes(), s));
    const std::vector<kalman::StreamScalars> initial(m.scalars.size());
    QUELL_CUDA_CHECK(cudaMemcpyAsync(m.scalars.get(), initial.data(), m.scalars.bytes(), cudaMemcpyHostToDevice, s));
    m.stream.synchronize();
    m.newest = 0;
    if (m.mirroring) {
        std::fill_n(m.hostTaps.get(), m.hostTaps.size(), 0.0f);
        std::fill_n(m.hostScalars.get(), m.hostScalars.size(), kalman::StreamScalars{});
    }
}

void GpuBatchedPbfdkf::process(const float* mic, const float* ref, float* out, std::size_t samplesPerStream,
                               const unsigned char* adapting)
{
    process(mic, ref, out, samplesPerStream, samplesPerStream, adapting);
}

void GpuBatchedPbfdkf::process(const float* mic, const float* ref, float* out, std::size_t samplesPerStream, std::size_t hostPitchSamples,
                               const unsigned char* adapting, const unsigned char* held)
{
    Impl& m = *impl_;
    const kalman::BatchGeometry& g = m.geometry;
    const std::size_t B = static_cast<std::size_t>(g.block), S = static_cast<std::size_t>(g.streams);
    if (samplesPerStream % B != 0)
        throw std::invalid_argument("GPU Kalman filter: samples per stream must be a multiple of the block size " + std::to_string(B)
                                    + " (got " + std::to_string(samplesPerStream) + ")");
    cudaStream_t s = m.stream.get();
    if (adapting != nullptr)
        QUELL_CUDA_CHECK(cudaMemcpyAsync(m.adapting.get(), adapting, S, cudaMemcpyHostToDevice, s));
    const bool anyHeld = held != nullptr && std::any_of(held, held + S, [](unsigned char h) { return h != 0; });
    if (anyHeld)
        QUELL_CUDA_CHECK(cudaMemcpyAsync(m.held.get(), held, S, cudaMemcpyHostToDevice, s));
    const int threads = KalmanLaunchPolicy::threadsPerStream(g.block);
    m.lastMs = 0.0;
    if (hostPitchSamples < samplesPerStream)
        throw std::invalid_argument("GPU Kalman filter: a host pitch of " + std::to_string(hostPitchSamples) + " samples, under the "
                                    + std::to_string(samplesPerStream) + " of a call");
    const std::size_t hostPitch = hostPitchSamples * sizeof(float);
    for (std::size_t done = 0; done < samplesPerStream;) {
        const std::size_t n = std::min(samplesPerStream - done, static_cast<std::size_t>(m.maxBlocks) * B);
        const std::size_t devicePitch = n * sizeof(float);
        QUELL_CUDA_CHECK(cudaMemcpy2DAsync(m.mic.get(), devicePitch, mic + done, hostPitch, n * sizeof(float), S, cudaMemcpyHostToDevice, s));
        QUELL_CUDA_CHECK(cudaMemcpy2DAsync(m.ref.get(), devicePitch, ref + done, hostPitch, n * sizeof(float), S, cudaMemcpyHostToDevice, s));
        m.start.record(s);
        for (std::size_t offset = 0; offset < n; offset += B) {
            m.newest = (m.newest + g.partitions - 1) % g.partitions;
            kalman::BlockIo io{m.mic.get(),  m.ref.get(), m.out.get(), n, offset, adapting != nullptr ? m.adapting.get() : nullptr,
                               anyHeld ? m.held.get() : nullptr, m.newest};
            kalman::launchBlock(g, m.state(), m.schedule, io, threads, s);
        }
        m.stop.record(s);
        QUELL_CUDA_CHECK(cudaMemcpy2DAsync(out + done, hostPitch, m.out.get(), devicePitch, n * sizeof(float), S, cudaMemcpyDeviceToHost, s));
        m.lastMs += m.stop.since(m.start);
        done += n;
    }
    if (m.mirroring)
        m.queueMirror();
    m.stream.synchronize();
}

void GpuBatchedPbfdkf::controlStreams(const unsigned char* controls)
{
    Impl& m = *impl_;
    QUELL_CUDA_CHECK(cudaMemcpyAsync(m.controls.get(), controls, m.controls.size(), cudaMemcpyHostToDevice, m.stream.get()));
    kalman::launchStreamControls(m.geometry, m.state(), m.controls.get(), m.stream.get());
    m.stream.synchronize();   // the caller's array may change once this returns
}

void GpuBatchedPbfdkf::mirrorState()
{
    Impl& m = *impl_;
    if (m.mirroring)
        return;
    const std::size_t S = static_cast<std::size_t>(m.geometry.streams), taps = static_cast<std::size_t>(m.geometry.taps);
    m.taps.allocate(S * taps);
    m.hostTaps.allocate(S * taps);
    m.hostScalars.allocate(S);
    m.queueMirror();
    m.stream.synchronize();
    m.mirroring = true;
}

const float* GpuBatchedPbfdkf::mirroredTaps(int stream) const
{
    const Impl& m = *impl_;
    if (!m.mirroring || stream < 0 || stream >= m.geometry.streams)
        throw std::logic_error("GpuBatchedPbfdkf::mirroredTaps: mirrorState() first, and a stream of the batch");
    return m.hostTaps.get() + static_cast<std::size_t>(stream) * static_cast<std::size_t>(m.geometry.taps);
}

dsp::RlsHealth GpuBatchedPbfdkf::mirroredHealth(int stream) const
{
    const Impl& m = *impl_;
    if (!m.mirroring || stream < 0 || stream >= m.geometry.streams)
        throw std::logic_error("GpuBatchedPbfdkf::mirroredHealth: mirrorState() first, and a stream of the batch");
    return healthOf(m.hostScalars.get()[stream]);
}

float* GpuBatchedPbfdkf::blockMic() { return impl_->hostMic.get(); }
float* GpuBatchedPbfdkf::blockRef() { return impl_->hostRef.get(); }
const float* GpuBatchedPbfdkf::blockOut() const { return impl_->hostOut.get(); }

void GpuBatchedPbfdkf::processBlock(const unsigned char* adapting)
{
    Impl& m = *impl_;
    process(m.hostMic.get(), m.hostRef.get(), m.hostOut.get(), static_cast<std::size_t>(m.geometry.block), adapting);
}

std::vector<dsp::RlsHealth> GpuBatchedPbfdkf::health() const
{
    const Impl& m = *impl_;
    std::vector<kalman::StreamScalars> scalars(m.scalars.size());
    QUELL_CUDA_CHECK(cudaMemcpyAsync(scalars.data(), m.scalars.get(), m.scalars.bytes(), cudaMemcpyDeviceToHost, m.stream.get()));
    m.stream.synchronize();
    std::vector<dsp::RlsHealth> health(scalars.size());
    for (std::size_t i = 0; i < scalars.size(); ++i)
        health[i] = healthOf(scalars[i]);
    return health;
}

int GpuBatchedPbfdkf::streams() const { return impl_->geometry.streams; }
int GpuBatchedPbfdkf::blockSize() const { return impl_->geometry.block; }
int GpuBatchedPbfdkf::partitions() const { return impl_->geometry.partitions; }
double GpuBatchedPbfdkf::lastKernelMilliseconds() const { return impl_->lastMs; }

std::size_t GpuBatchedPbfdkf::stateBytesPerStream() const
{
    const kalman::BatchGeometry& g = impl_->geometry;
    const std::size_t bins = static_cast<std::size_t>(g.partitions) * static_cast<std::size_t>(g.halfBins);
    return bins * (2 * sizeof(float2) + sizeof(float)) + static_cast<std::size_t>(g.block) * sizeof(float) + sizeof(kalman::StreamScalars);
}

} // namespace quell::gpu
