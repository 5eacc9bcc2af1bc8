// SPDX-License-Identifier: GPL-3.0-or-later
// Host side of the block-exact GPU RLS: the device state, the far-end history windows, and the order of
// the stages (BlockRlsKernels.cuh) for each block of a call.
#include "rls/GpuBlockRls.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"
#include "rls/BlockRlsKernels.cuh"
#include "rls/GpuRls.h"

namespace quell::gpu {

struct GpuBlockRls::Impl {
    dsp::RlsSettings settings{};
    std::size_t maxCall = 0;
    blockrls::Geometry geometry{};
    blockrls::Buffers buffers{};
    Stream stream{Stream::Highest{}};
    Event start, stop;
    DeviceBuffer<float> P, w0, U, V, Z, window[2], mic, out, weights;
    DeviceBuffer<double> G, H, A, C, b, s, y0, d, stepLambda, traceParts;
    DeviceBuffer<unsigned char> paused;
    DeviceBuffer<blockrls::State> state;
    PinnedBuffer<float> hostMic, hostRef, hostOut, hostWeights;
    int side = 0;                 // the history window in use
    std::size_t lastCall = 0;     // samples of the last call: the window's newest length - 1 are after them
    int columns = 0;              // steps taken in the current block
    int sinceCheck = 0;           // samples since the last bounded-trace check (as dsp::Rls)
    std::uint64_t sanitised = 0;
    double lastMs = 0.0;

    void runChunk(const float* micIn, const float* refIn, float* outOut, std::size_t n, bool adapting);
    void runSteps(int begin, int end, std::size_t offset, bool adapting);
};

GpuBlockRls::GpuBlockRls() : impl_(std::make_unique<Impl>()) {}
GpuBlockRls::~GpuBlockRls() = default;

namespace {

// Why the settings cannot run, device aside (empty: they can).
std::string settingsWhyNot(const dsp::RlsSettings& settings, int blockSize, std::size_t maxCall)
{
    try {
        dsp::validate(settings);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    if (blockSize < 1 || blockSize > GpuBlockRls::kMaxBlock)
        return "GPU block RLS: the block size must be 1 to " + std::to_string(GpuBlockRls::kMaxBlock) + " samples (got "
               + std::to_string(blockSize) + ")";
    if (settings.channels > 2)
        return "GPU block RLS: 1 or 2 far-end channels (got " + std::to_string(settings.channels) + ")";
    if (settings.totalTaps() > kGpuRlsMaxTaps)
        return "GPU block RLS: at most " + std::to_string(kGpuRlsMaxTaps) + " taps (got " + std::to_string(settings.totalTaps()) + ")";
    if (maxCall < 1 || maxCall > (1u << 22))
        return "GPU block RLS: maxCall must be in [1, 4194304]";
    return {};
}

} // namespace

std::string GpuBlockRls::whyNot(const dsp::RlsSettings& settings, int blockSize, std::size_t maxCall)
{
    std::string why = settingsWhyNot(settings, blockSize, maxCall);
    if (!why.empty())
        return why;
    try {
        const std::size_t stride = (static_cast<std::size_t>(settings.totalTaps()) + 63) / 64 * 64;
        std::size_t free = 0, total = 0;
        QUELL_CUDA_CHECK(cudaMemGetInfo(&free, &total));
        const std::size_t need = stride * stride * sizeof(float) + 4 * static_cast<std::size_t>(blockSize) * stride * sizeof(float);
        if (need > free)
            return "GPU block RLS: needs " + std::to_string(need >> 20) + " MiB of device memory, " + std::to_string(free >> 20) + " MiB free";
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

void GpuBlockRls::prepare(const dsp::RlsSettings& settings, int blockSize, std::size_t maxCall)
{
    if (const std::string why = settingsWhyNot(settings, blockSize, maxCall); !why.empty())
        throw std::invalid_argument(why);
    Impl& m = *impl_;
    m.settings = settings;
    m.maxCall = maxCall;
    blockrls::Geometry& g = m.geometry;
    g.taps = settings.totalTaps();
    g.channels = settings.channels;
    g.length = settings.tapsPerChannel;
    g.stride = (g.taps + 63) / 64 * 64;
    g.block = blockSize;
    g.historyPitch = static_cast<std::size_t>(g.length - 1) + maxCall;
    const std::size_t S = static_cast<std::size_t>(g.stride), k = static_cast<std::size_t>(blockSize);
    m.P.allocate(S * S);
    m.w0.allocate(S);
    m.weights.allocate(S);
    m.U.allocate(k * S);
    m.V.allocate(k * S);
    m.Z.allocate(k * S);
    for (auto& w : m.window)
        w.allocate(static_cast<std::size_t>(g.channels) * g.historyPitch);
    m.mic.allocate(maxCall);
    m.out.allocate(maxCall);
    for (auto* buffer : {&m.G, &m.H, &m.A, &m.C})
        buffer->allocate(k * k);
    for (auto* buffer : {&m.b, &m.s, &m.y0, &m.d, &m.stepLambda})
        buffer->allocate(k);
    m.traceParts.allocate(S / 4);
    m.paused.allocate(k);
    m.state.allocate(1);
    m.hostMic.allocate(maxCall);
    m.hostRef.allocate(static_cast<std::size_t>(g.channels) * maxCall);
    m.hostOut.allocate(maxCall);
    m.hostWeights.allocate(S);
    m.buffers = blockrls::Buffers{m.P.get(), m.w0.get(), m.U.get(), m.V.get(), m.Z.get(), m.G.get(), m.H.get(), m.A.get(),
                                  m.C.get(), m.b.get(), m.s.get(), m.y0.get(), m.d.get(), m.paused.get(), m.stepLambda.get(),
                                  m.traceParts.get(), m.state.get()};
    reset();
}

void GpuBlockRls::reset()
{
    Impl& m = *impl_;
    cudaStream_t s = m.stream.get();
    for (auto* buffer : {&m.P, &m.w0, &m.U, &m.V, &m.Z, &m.window[0], &m.window[1]})
        QUELL_CUDA_CHECK(cudaMemsetAsync(buffer->get(), 0, buffer->bytes(), s));
    for (auto* buffer : {&m.G, &m.H, &m.A, &m.C, &m.b, &m.s, &m.y0, &m.d, &m.stepLambda, &m.traceParts})
        QUELL_CUDA_CHECK(cudaMemsetAsync(buffer->get(), 0, buffer->bytes(), s));
    blockrls::State initial{};
    initial.mu = 1.0;
    initial.lambdaNow = m.settings.lambda;
    initial.pendingMu = 1.0f;
    initial.reinitP = 1; // the first block's start writes P = I / delta
    QUELL_CUDA_CHECK(cudaMemcpyAsync(m.state.get(), &initial, sizeof(initial), cudaMemcpyHostToDevice, s));
    m.stream.synchronize();
    m.side = 0;
    m.lastCall = 0;
    m.columns = 0;
    m.sinceCheck = 0;
    m.sanitised = 0;
}

void GpuBlockRls::Impl::runSteps(int begin, int end, std::size_t offset, bool adapting)
{
    const blockrls::Geometry& g = geometry;
    cudaStream_t s = stream.get();
    const float* history = window[side].get();
    const double silence = settings.silenceFloor * static_cast<double>(g.taps);
    blockrls::buildColumns(g, buffers, history, mic.get(), static_cast<int>(offset), begin, end, adapting, silence, s);
    if (begin == 0)
        blockrls::startBlock(g, buffers, static_cast<float>(1.0 / settings.delta), s);
    blockrls::computeV(g, buffers, begin, end, s);
    blockrls::computeGram(g, buffers, begin, end, s);
    // The recurrence in launches that each hold at most one bounded-trace check, at the same samples as
    // the CPU's.
    int from = begin, check = -1;
    for (int j = begin; j < end; ++j) {
        if (++sinceCheck > settings.traceCheckSamples) {
            sinceCheck = 1;
            if (check >= 0) {
                blockrls::recurrence(g, buffers, from, j, check, settings.lambda, dsp::traceBound(settings),
                                     out.get() + offset + static_cast<std::size_t>(from - begin), s);
                from = j;
            }
            check = j;
        }
    }
    blockrls::recurrence(g, buffers, from, end, check, settings.lambda, dsp::traceBound(settings),
                         out.get() + offset + static_cast<std::size_t>(from - begin), s);
    columns = end;
    if (columns == g.block) {
        blockrls::finishBlock(g, buffers, columns, false, s);
        columns = 0;
    }
}

void GpuBlockRls::Impl::runChunk(const float* micIn, const float* refIn, float* outOut, std::size_t n, bool adapting)
{
    const blockrls::Geometry& g = geometry;
    const std::size_t C = static_cast<std::size_t>(g.channels), L = static_cast<std::size_t>(g.length);
    // Sanitise into the pinned staging (far-end channels planar), counting as dsp::Rls does.
    for (std::size_t t = 0; t < n; ++t) {
        bool bad = !std::isfinite(micIn[t]);
        hostMic.get()[t] = bad ? 0.0f : micIn[t];
        for (std::size_t c = 0; c < C; ++c) {
            const float x = refIn[t * C + c];
            const bool finite = std::isfinite(x);
            bad = bad || !finite;
            hostRef.get()[c * maxCall + t] = finite ? x : 0.0f;
        }
        sanitised += bad ? 1 : 0;
    }
    cudaStream_t s = stream.get();
    // The other window takes the newest L - 1 samples of this one, then the call's samples.
    const int next = 1 - side;
    const std::size_t pitch = g.historyPitch * sizeof(float);
    if (L > 1)
        QUELL_CUDA_CHECK(cudaMemcpy2DAsync(window[next].get(), pitch, window[side].get() + lastCall, pitch, (L - 1) * sizeof(float), C,
                                           cudaMemcpyDeviceToDevice, s));
    QUELL_CUDA_CHECK(cudaMemcpy2DAsync(window[next].get() + (L - 1), pitch, hostRef.get(), maxCall * sizeof(float), n * sizeof(float), C,
                                       cudaMemcpyHostToDevice, s));
    QUELL_CUDA_CHECK(cudaMemcpyAsync(mic.get(), hostMic.get(), n * sizeof(float), cudaMemcpyHostToDevice, s));
    side = next;
    lastCall = n;
    start.record(s);
    for (std::size_t pos = 0; pos < n;) {
        const int begin = columns;
        const int end = begin + static_cast<int>(std::min<std::size_t>(n - pos, static_cast<std::size_t>(g.block - begin)));
        runSteps(begin, end, pos, adapting);
        pos += static_cast<std::size_t>(end - begin);
    }
    stop.record(s);
    QUELL_CUDA_CHECK(cudaMemcpyAsync(hostOut.get(), out.get(), n * sizeof(float), cudaMemcpyDeviceToHost, s));
    stream.synchronize();
    lastMs = stop.since(start);
    std::copy(hostOut.get(), hostOut.get() + n, outOut);
}

void GpuBlockRls::process(const float* mic, const float* ref, float* out, std::size_t samples)
{
    Impl& m = *impl_;
    if (m.geometry.taps == 0)
        throw std::logic_error("GpuBlockRls::process before prepare");
    const std::size_t C = static_cast<std::size_t>(m.geometry.channels);
    double ms = 0.0;
    for (std::size_t done = 0; done < samples;) {
        const std::size_t n = std::min(samples - done, m.maxCall);
        m.runChunk(mic + done, ref + done * C, out + done, n, adapting_);
        ms += m.lastMs;
        done += n;
    }
    m.lastMs = ms;
}

std::vector<float> GpuBlockRls::weights() const
{
    Impl& m = *impl_;
    std::vector<float> w(static_cast<std::size_t>(m.geometry.taps));
    copyWeights(w.data(), w.size());
    return w;
}

void GpuBlockRls::copyWeights(float* out, std::size_t count) const
{
    Impl& m = *impl_;
    if (count > static_cast<std::size_t>(m.geometry.taps))
        throw std::out_of_range("GpuBlockRls::copyWeights: more weights asked than taps");
    blockrls::currentWeights(m.geometry, m.buffers, m.columns, m.weights.get(), m.stream.get());
    QUELL_CUDA_CHECK(cudaMemcpyAsync(m.hostWeights.get(), m.weights.get(), count * sizeof(float), cudaMemcpyDeviceToHost, m.stream.get()));
    m.stream.synchronize();
    std::copy(m.hostWeights.get(), m.hostWeights.get() + count, out);
}

void GpuBlockRls::restartCovariance()
{
    Impl& m = *impl_;
    blockrls::finishBlock(m.geometry, m.buffers, m.columns, true, m.stream.get());
    m.columns = 0;
    m.stream.synchronize();
}

dsp::RlsHealth GpuBlockRls::health() const
{
    const Impl& m = *impl_;
    blockrls::State st{};
    QUELL_CUDA_CHECK(cudaMemcpyAsync(&st, m.state.get(), sizeof(st), cudaMemcpyDeviceToHost, m.stream.get()));
    m.stream.synchronize();
    dsp::RlsHealth h;
    h.pausedSamples = st.pausedSamples;
    h.reinitialisations = st.reinitialisations;
    h.sanitisedSamples = m.sanitised;
    return h;
}

int GpuBlockRls::taps() const { return impl_->geometry.taps; }
int GpuBlockRls::blockSize() const { return impl_->geometry.block; }
double GpuBlockRls::lastKernelMilliseconds() const { return impl_->lastMs; }

} // namespace quell::gpu
