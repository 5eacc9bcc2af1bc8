// SPDX-License-Identifier: GPL-3.0-or-later
// Host side of the GPU RLS: owns the device state (P, w, v, far-end history, scalars), streams blocks of
// samples through the persistent kernel, one launch per block of at most `maxBlock` samples.
#include "rls/GpuRls.h"

#include <algorithm>
#include <initializer_list>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"
#include "rls/RlsKernelDispatch.cuh"
#include "rls/RlsKernelParams.cuh"

namespace quell::gpu {
namespace {

// A launch of `clusterBlocks`-block clusters (one per channel). `attribute` must outlive the config.
cudaLaunchConfig_t clusterLaunch(int clusterBlocks, int channels, int threads, std::size_t smem, cudaStream_t stream,
                                 cudaLaunchAttribute& attribute)
{
    attribute = cudaLaunchAttribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned int>(clusterBlocks);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned int>(clusterBlocks * channels));
    config.blockDim = dim3(static_cast<unsigned int>(threads));
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    return config;
}

} // namespace

struct GpuRls::Impl {
    dsp::RlsSettings settings{};
    int channels = 0;
    std::size_t maxBlock = 0;
    int taps = 0;
    int inputs = 1, inputTaps = 0;   // far-end channels stacked in u, and each one's taps
    RlsLaunchPolicy policy{};
    int blocksPerChannel = 0, paddedColumns = 0, rowsTotal = 0, vLength = 0, sharedGroups = 0;
    std::size_t pStride = 0, sharedBytes = 0;
    rls::PersistentKernel kernel = nullptr;
    const char* variant = "none";
    int side = 0;               // which far-end window holds the current history
    double lastMs = 0.0;
    bool adapting = true;
    // Bounded trace (dsp::Rls::forgetting): forgetting stays on while trace(P) <= traceBound (checked
    // after every launch, the largest over the channels).
    bool forgetting = true;
    double traceBound = 0.0;
    int sinceCheck = 0;   // samples since the last trace check

    Stream stream{Stream::Highest{}};   // the canceller's real-time path goes first on a shared GPU
    Event start, stop;
    DeviceBuffer<float> P, w, window[2], mic, out;
    DeviceBuffer<unsigned long long> v, partials;
    DeviceBuffer<unsigned int> barrier;
    DeviceBuffer<rls::ChannelState> state;
    DeviceBuffer<double> trace;
    PinnedBuffer<float> hostMic, hostRef, hostOut;
    PinnedBuffer<double> hostTrace;

    void runChunk(const float* micIn, const float* refIn, float* outOut, std::size_t pitch, std::size_t offset,
                  std::size_t n);
    // The whole call, in launches of at most maxBlock that end at the trace checks.
    void runAll(const float* micIn, const float* refIn, float* outOut, std::size_t samples);
};

GpuRls::GpuRls() : impl_(std::make_unique<Impl>()) {}
GpuRls::~GpuRls() = default;

void GpuRls::prepare(const dsp::RlsSettings& settings, int channels, std::size_t maxBlock)
{
    prepare(settings, channels, maxBlock, RlsLaunchPolicy{});
}

namespace {

// How one channel's filter lies on this device, or why it cannot (whyNot non-empty). Device errors
// still throw CudaError: they are faults, not answers.
struct Layout {
    RlsLaunchPolicy policy{};
    rls::PersistentKernel kernel = nullptr;
    int blocksPerChannel = 0, sharedGroups = 0;
    std::size_t sharedBytes = 0;
    std::string whyNot;
};

// Checks one concrete policy (every field chosen) for N taps on `device`.
Layout checkPolicy(const dsp::RlsSettings& settings, int channels, int device, const cudaDeviceProp& prop,
                   const RlsLaunchPolicy& pol)
{
    const int N = settings.totalTaps();
    Layout layout;
    layout.policy = pol;
    auto bad = [&](const std::string& why) {
        layout.whyNot = "launch policy (threads " + std::to_string(pol.threads) + ", chunks " + std::to_string(pol.columnChunks)
                        + ", rows " + std::to_string(pol.rowsPerBlock) + ", register groups " + std::to_string(pol.registerGroups)
                        + ", shared groups " + std::to_string(pol.sharedGroups) + (pol.cluster ? ", cluster" : "") + ") for "
                        + std::to_string(N) + " taps: " + why;
        return layout;
    };
    if (pol.threads < 32 || pol.threads > 512 || pol.threads % 32 != 0)
        return bad("threads must be a multiple of 32 in [32, 512]");
    if (pol.rowsPerBlock < 4 || pol.rowsPerBlock % 4 != 0)
        return bad("rows per block must be a positive multiple of 4");
    if (4 * pol.threads * pol.columnChunks < N)
        return bad("4 * threads * column chunks must cover the taps");
    const bool cluster = pol.cluster == 1;
    const rls::PersistentKernel kernel = rls::persistentKernelFor(pol.columnChunks, pol.registerGroups, cluster, settings.channels);
    if (kernel == nullptr)
        return bad("no kernel instantiated for these column chunks and register groups");
    const int groups = pol.rowsPerBlock / 4;
    const int sharedGroups = std::max(0, std::min(pol.sharedGroups, groups - pol.registerGroups));
    const std::size_t smem = rls::sharedBytes(pol.threads, pol.columnChunks, pol.rowsPerBlock, sharedGroups, cluster);
    cudaFuncAttributes attributes{};
    QUELL_CUDA_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel)));
    if (smem + attributes.sharedSizeBytes > prop.sharedMemPerBlockOptin)
        return bad("needs " + std::to_string(smem + attributes.sharedSizeBytes) + " bytes of shared memory");
    QUELL_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    const int K = (N + pol.rowsPerBlock - 1) / pol.rowsPerBlock;
    if (K > 160)
        return bad("at most 160 blocks per channel (got " + std::to_string(K) + ")");
    if (cluster) {
        // One cluster per channel: the hardware co-schedules a cluster's blocks (on one GPC); clusters
        // of different channels are independent and need not be resident together.
        if (K > kRlsMaxClusterBlocks)
            return bad("a cluster holds at most " + std::to_string(kRlsMaxClusterBlocks) + " blocks (got "
                       + std::to_string(K) + ")");
        int clusterSupported = 0;
        QUELL_CUDA_CHECK(cudaDeviceGetAttribute(&clusterSupported, cudaDevAttrClusterLaunch, device));
        if (!clusterSupported)
            return bad("the device cannot launch thread-block clusters");
        if (K > 8)
            QUELL_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                                  cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        cudaLaunchAttribute attribute{};
        const cudaLaunchConfig_t config = clusterLaunch(K, channels, pol.threads, smem, nullptr, attribute);
        int clusters = 0;
        QUELL_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(kernel), &config));
        if (clusters < 1)
            return bad("a cluster of " + std::to_string(K) + " blocks with " + std::to_string(smem)
                       + " bytes of shared memory each cannot be resident");
    } else if (K > 1) { // blocks of a channel wait for each other: all of them must be resident at once
        int perSm = 0;
        QUELL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, pol.threads, smem));
        if (static_cast<long long>(perSm) * prop.multiProcessorCount < static_cast<long long>(K) * channels)
            return bad(std::to_string(K * channels) + " blocks cannot all be resident (" + std::to_string(perSm)
                       + " per multiprocessor)");
    }
    layout.kernel = kernel;
    layout.blocksPerChannel = K;
    layout.sharedGroups = sharedGroups;
    layout.sharedBytes = smem;
    return layout;
}

// The settings' checks, then the policy: the cluster layout where it is the default and can run here,
// else the grid layout (no thread-block clusters on this device, or 16 blocks of one cannot be
// co-resident, e.g. a small MIG slice).
Layout resolveLayout(const dsp::RlsSettings& settings, int channels, std::size_t maxBlock, const RlsLaunchPolicy& request)
{
    Layout layout;
    try {
        dsp::validate(settings);
    } catch (const std::invalid_argument& e) {
        layout.whyNot = e.what();
        return layout;
    }
    if (channels < 1)
        layout.whyNot = "channels must be at least 1 (got " + std::to_string(channels) + ")";
    else if (maxBlock < 1 || maxBlock > (1u << 22))
        layout.whyNot = "maxBlock must be in [1, 4194304]";
    else if (settings.totalTaps() > kGpuRlsMaxTaps)
        layout.whyNot = "at most " + std::to_string(kGpuRlsMaxTaps) + " taps in all far-end channels on the GPU (got "
                        + std::to_string(settings.totalTaps()) + ")";
    else if (!GpuRls::takesFarEndChannels(settings))
        layout.whyNot = "1 far-end channel, or 2 with a multiple of 4 taps each (got " + std::to_string(settings.channels)
                        + " x " + std::to_string(settings.tapsPerChannel) + ")";
    if (!layout.whyNot.empty())
        return layout;

    int device = 0;
    QUELL_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    QUELL_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    const int smemOptin = static_cast<int>(prop.sharedMemPerBlockOptin);
    RlsLaunchPolicy chosen = chooseRlsPolicy(settings.totalTaps(), channels, prop.multiProcessorCount, smemOptin, request);
    Layout first = checkPolicy(settings, channels, device, prop, chosen);
    if (!first.whyNot.empty() && request.cluster < 0 && chosen.cluster == 1) {
        RlsLaunchPolicy asGrid = request;
        asGrid.cluster = 0;
        chosen = chooseRlsPolicy(settings.totalTaps(), channels, prop.multiProcessorCount, smemOptin, asGrid);
        return checkPolicy(settings, channels, device, prop, chosen);
    }
    return first;
}

} // namespace

std::string GpuRls::whyNot(const dsp::RlsSettings& settings, int channels, std::size_t maxBlock)
{
    try {
        return resolveLayout(settings, channels, maxBlock, RlsLaunchPolicy{}).whyNot;
    } catch (const CudaError& e) {
        return std::string("the device failed: ") + e.what();
    }
}

void GpuRls::prepare(const dsp::RlsSettings& settings, int channels, std::size_t maxBlock,
                     const RlsLaunchPolicy& request)
{
    const Layout layout = resolveLayout(settings, channels, maxBlock, request);
    if (!layout.whyNot.empty())
        throw std::invalid_argument("GpuRls: " + layout.whyNot);
    const int N = settings.totalTaps();
    const RlsLaunchPolicy& pol = layout.policy;
    const bool cluster = pol.cluster == 1;
    const int K = layout.blocksPerChannel;
    const int groups = pol.rowsPerBlock / 4;
    const int sharedGroups = layout.sharedGroups;
    const std::size_t smem = layout.sharedBytes;
    const rls::PersistentKernel kernel = layout.kernel;

    Impl& m = *impl_;
    m.settings = settings;
    m.channels = channels;
    m.maxBlock = maxBlock;
    m.taps = N;
    m.inputs = settings.channels;
    m.inputTaps = settings.tapsPerChannel;
    m.policy = pol;
    m.policy.sharedGroups = sharedGroups;
    m.blocksPerChannel = K;
    m.paddedColumns = 4 * pol.threads * pol.columnChunks;
    m.rowsTotal = K * pol.rowsPerBlock;
    m.vLength = std::max(m.paddedColumns, m.rowsTotal);
    m.sharedGroups = sharedGroups;
    m.pStride = static_cast<std::size_t>(m.rowsTotal) * m.paddedColumns;
    m.sharedBytes = smem;
    m.kernel = kernel;
    m.variant = channels > 1 ? (cluster ? "batched-cluster" : "batched")
                : cluster ? "persistent-cluster"
                : pol.registerGroups + sharedGroups >= groups ? "persistent-smem"
                                                               : "persistent-global";

    const std::size_t B = static_cast<std::size_t>(channels);
    m.P.allocate(B * m.pStride);
    m.w.allocate(B * m.rowsTotal);
    m.v.allocate(B * 2 * m.vLength);
    m.partials.allocate(B * 2 * 2 * K);
    m.barrier.allocate(B);
    m.state.allocate(B);
    const std::size_t inputs = static_cast<std::size_t>(m.inputs);
    for (auto& win : m.window)
        win.allocate(B * inputs * (static_cast<std::size_t>(m.inputTaps) + maxBlock));
    m.mic.allocate(B * maxBlock);
    m.out.allocate(B * maxBlock);
    m.hostMic.allocate(B * maxBlock);
    m.hostRef.allocate(B * inputs * maxBlock);
    m.hostOut.allocate(B * maxBlock);
    m.trace.allocate(B);
    m.hostTrace.allocate(B);
    m.traceBound = dsp::traceBound(settings);
    reset();
}

void GpuRls::setAdaptation(bool on) { impl_->adapting = on; }

void GpuRls::reset()
{
    Impl& m = *impl_;
    if (m.channels == 0)
        return;
    const cudaStream_t s = m.stream.get();
    rls::launchIdentity(m.P.get(), m.channels, m.pStride, m.rowsTotal, m.paddedColumns, m.taps,
                        static_cast<float>(1.0 / m.settings.delta), s);
    QUELL_CUDA_CHECK(cudaMemsetAsync(m.w.get(), 0, m.w.bytes(), s));
    QUELL_CUDA_CHECK(cudaMemsetAsync(m.v.get(), 0, m.v.bytes(), s));
    QUELL_CUDA_CHECK(cudaMemsetAsync(m.partials.get(), 0, m.partials.bytes(), s));
    QUELL_CUDA_CHECK(cudaMemsetAsync(m.state.get(), 0, m.state.bytes(), s));
    for (auto& win : m.window)
        QUELL_CUDA_CHECK(cudaMemsetAsync(win.get(), 0, win.bytes(), s));
    m.stream.synchronize();
    m.side = 0;
    m.lastMs = 0.0;
    m.forgetting = true;
    m.sinceCheck = 0;
}

void GpuRls::Impl::runChunk(const float* micIn, const float* refIn, float* outOut, std::size_t pitch,
                            std::size_t offset, std::size_t n)
{
    const cudaStream_t s = stream.get();
    const std::size_t B = static_cast<std::size_t>(channels), I = static_cast<std::size_t>(inputs);
    for (std::size_t c = 0; c < B; ++c) {
        std::memcpy(hostMic.get() + c * maxBlock, micIn + c * pitch + offset, n * sizeof(float));
        if (I == 1) {
            std::memcpy(hostRef.get() + c * maxBlock, refIn + c * pitch + offset, n * sizeof(float));
        } else { // interleaved far end: each input to its own row (and window)
            const float* r = refIn + (c * pitch + offset) * I;
            for (std::size_t i = 0; i < I; ++i)
                for (std::size_t k = 0; k < n; ++k)
                    hostRef.get()[(c * I + i) * maxBlock + k] = r[k * I + i];
        }
    }
    const std::size_t rowBytes = maxBlock * sizeof(float);
    const std::size_t inputStride = static_cast<std::size_t>(inputTaps) + maxBlock;
    QUELL_CUDA_CHECK(cudaMemcpy2DAsync(mic.get(), rowBytes, hostMic.get(), rowBytes, n * sizeof(float), B,
                                       cudaMemcpyHostToDevice, s));
    QUELL_CUDA_CHECK(cudaMemcpy2DAsync(window[side].get() + inputTaps, inputStride * sizeof(float), hostRef.get(), rowBytes,
                                       n * sizeof(float), B * I, cudaMemcpyHostToDevice, s));
    const bool cluster = policy.cluster == 1;
    if (policy.counterBarrier && !cluster)
        QUELL_CUDA_CHECK(cudaMemsetAsync(barrier.get(), 0, barrier.bytes(), s));

    rls::KernelParams p{};
    p.taps = taps;
    p.paddedColumns = paddedColumns;
    p.rowsPerBlock = policy.rowsPerBlock;
    p.blocksPerChannel = blocksPerChannel;
    p.sharedGroups = sharedGroups;
    p.samples = static_cast<int>(n);
    p.inputTaps = inputTaps;
    p.inputStride = static_cast<int>(inputStride);
    p.windowStride = static_cast<int>(I * inputStride);
    p.ioStride = static_cast<int>(maxBlock);
    p.vLength = vLength;
    // Forgetting off (trace bound reached): lambda = 1 for this launch, as the CPU twin's call.
    p.lambda = forgetting ? static_cast<float>(settings.lambda) : 1.0f;
    p.invLambda = forgetting ? static_cast<float>(1.0 / settings.lambda) : 1.0f;
    p.diag = static_cast<float>(1.0 / settings.delta);
    // Paused adaptation is silence that no far end can exceed.
    p.silenceEnergy = adapting ? settings.silenceFloor * static_cast<double>(taps) : std::numeric_limits<double>::max();
    p.pStride = pStride;
    p.P = P.get();
    p.w = w.get();
    p.v = v.get();
    p.partials = partials.get();
    p.barrier = barrier.get();
    p.counterBarrier = policy.counterBarrier ? 1 : 0;
    p.windowIn = window[side].get();
    p.windowOut = window[side ^ 1].get();
    p.mic = mic.get();
    p.out = out.get();
    p.state = state.get();

    const dim3 grid(static_cast<unsigned int>(blocksPerChannel * channels));
    const dim3 block(static_cast<unsigned int>(policy.threads));
    start.record(s);
    if (cluster) {
        cudaLaunchAttribute attribute{};
        const cudaLaunchConfig_t config =
            clusterLaunch(blocksPerChannel, channels, policy.threads, sharedBytes, s, attribute);
        QUELL_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, p));
    } else if (blocksPerChannel > 1) {
        void* args[] = {&p};
        QUELL_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid, block, args,
                                                     sharedBytes, s));
    } else {
        kernel<<<grid, block, sharedBytes, s>>>(p);
        QUELL_CUDA_CHECK_LAUNCH();
    }
    stop.record(s);
    rls::launchTrace(P.get(), channels, pStride, paddedColumns, taps, trace.get(), s);
    QUELL_CUDA_CHECK(cudaMemcpy2DAsync(hostOut.get(), rowBytes, out.get(), rowBytes, n * sizeof(float), B,
                                       cudaMemcpyDeviceToHost, s));
    QUELL_CUDA_CHECK(cudaMemcpyAsync(hostTrace.get(), trace.get(), B * sizeof(double), cudaMemcpyDeviceToHost, s));
    stream.synchronize();
    lastMs += stop.since(start);
    sinceCheck += static_cast<int>(n);
    if (sinceCheck == settings.traceCheckSamples) {
        double largest = 0.0;
        for (std::size_t c = 0; c < B; ++c)
            largest = std::max(largest, hostTrace.get()[c]);
        forgetting = !(largest > traceBound);
        sinceCheck = 0;
    }
    for (std::size_t c = 0; c < B; ++c)
        std::memcpy(outOut + c * pitch + offset, hostOut.get() + c * maxBlock, n * sizeof(float));
    side ^= 1;
}

bool GpuRls::takesFarEndChannels(const dsp::RlsSettings& settings)
{
    return settings.channels == 1 || (settings.channels == 2 && settings.tapsPerChannel % 4 == 0);
}

void GpuRls::checkLengths(std::size_t mic, std::size_t ref, std::size_t out) const
{
    if (mic * static_cast<std::size_t>(impl_->inputs) != ref || out < mic)
        throw std::invalid_argument("GpuRls::process: ref must hold the far-end channels x mic's samples, out at least mic's");
}

void GpuRls::process(const float* mic, const float* ref, float* out, std::size_t samples)
{
    Impl& m = *impl_;
    if (m.channels != 1)
        throw std::logic_error("GpuRls::process: prepared for " + std::to_string(m.channels)
                               + " channels; use processBatch");
    m.runAll(mic, ref, out, samples);
}

void GpuRls::Impl::runAll(const float* micIn, const float* refIn, float* outOut, std::size_t samples)
{
    lastMs = 0.0;
    // Launches end at the trace checks (every settings.traceCheckSamples samples since reset), so the
    // forgetting decisions fall on the same samples as the CPU twin's, however the stream is split.
    for (std::size_t offset = 0, n = 0; offset < samples; offset += n) {
        n = std::min({maxBlock, samples - offset, static_cast<std::size_t>(settings.traceCheckSamples - sinceCheck)});
        runChunk(micIn, refIn, outOut, samples, offset, n);
    }
}

void GpuRls::processBatch(const float* mic, const float* ref, float* out, std::size_t samples)
{
    Impl& m = *impl_;
    if (m.channels == 0)
        throw std::logic_error("GpuRls::processBatch: not prepared");
    m.runAll(mic, ref, out, samples);
}

std::vector<float> GpuRls::weights(int channel) const
{
    const Impl& m = *impl_;
    if (channel < 0 || channel >= m.channels)
        throw std::out_of_range("GpuRls::weights: no channel " + std::to_string(channel));
    std::vector<float> w(static_cast<std::size_t>(m.taps));
    QUELL_CUDA_CHECK(cudaMemcpy(w.data(), m.w.get() + static_cast<std::size_t>(channel) * m.rowsTotal,
                                w.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return w;
}

void GpuRls::copyWeights(int channel, float* out, std::size_t count) const
{
    const Impl& m = *impl_;
    if (channel < 0 || channel >= m.channels || count > static_cast<std::size_t>(m.taps))
        throw std::out_of_range("GpuRls::copyWeights: no channel " + std::to_string(channel) + " or too many taps");
    QUELL_CUDA_CHECK(cudaMemcpy(out, m.w.get() + static_cast<std::size_t>(channel) * m.rowsTotal,
                                count * sizeof(float), cudaMemcpyDeviceToHost));
}

void GpuRls::restartCovariance(int channel)
{
    Impl& m = *impl_;
    if (channel < 0 || channel >= m.channels)
        throw std::out_of_range("GpuRls::restartCovariance: no channel " + std::to_string(channel));
    const cudaStream_t s = m.stream.get();
    rls::launchIdentity(m.P.get() + static_cast<std::size_t>(channel) * m.pStride, 1, m.pStride, m.rowsTotal,
                        m.paddedColumns, m.taps, static_cast<float>(1.0 / m.settings.delta), s);
    // The deferred rank-one update of the last sample belongs to the forgotten P: drop it, as the CPU
    // twin does.
    rls::ChannelState st{};
    QUELL_CUDA_CHECK(cudaMemcpyAsync(&st, m.state.get() + channel, sizeof st, cudaMemcpyDeviceToHost, s));
    m.stream.synchronize();
    st.pending = 0;
    QUELL_CUDA_CHECK(cudaMemcpyAsync(m.state.get() + channel, &st, sizeof st, cudaMemcpyHostToDevice, s));
    m.stream.synchronize();
}

dsp::RlsHealth GpuRls::health(int channel) const
{
    const Impl& m = *impl_;
    if (channel < 0 || channel >= m.channels)
        throw std::out_of_range("GpuRls::health: no channel " + std::to_string(channel));
    rls::ChannelState st{};
    QUELL_CUDA_CHECK(cudaMemcpy(&st, m.state.get() + channel, sizeof st, cudaMemcpyDeviceToHost));
    dsp::RlsHealth h;
    h.reinitialisations = st.reinitialisations;
    h.pausedSamples = st.pausedSamples;
    h.sanitisedSamples = st.sanitisedSamples;
    return h;
}

int GpuRls::channels() const { return impl_->channels; }
int GpuRls::taps() const { return impl_->taps; }
const char* GpuRls::variant() const { return impl_->variant; }
RlsLaunchPolicy GpuRls::policy() const { return impl_->policy; }
int GpuRls::blocksPerChannel() const { return impl_->blocksPerChannel; }
double GpuRls::lastKernelMilliseconds() const { return impl_->lastMs; }

} // namespace quell::gpu
