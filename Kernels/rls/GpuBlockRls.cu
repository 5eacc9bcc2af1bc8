// SPDX-License-Identifier: GPL-3.0-or-later
// Host side of the block-exact GPU RLS: the device state, the far-end history windows, and the order of
// the stages (BlockRlsKernels.cuh) for each block of a call.
#include "rls/GpuBlockRls.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

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
    DeviceBuffer<float> P, w0, U, V, Z, window[2], mic, out, weights, vParts;
    DeviceBuffer<unsigned> vTickets;
    DeviceBuffer<double> G, H, A, C, b, s, y0, d, stepLambda, traceParts;
    DeviceBuffer<unsigned char> paused, streamAdapting, restartMarks, streamHeld;
    DeviceBuffer<blockrls::State> state;
    PinnedBuffer<float> hostMic, hostRef, hostOut, hostWeights, hostAllWeights;
    PinnedBuffer<unsigned char> hostControls; // a batch call's adaptation flags, its restart marks, its held flags
    const unsigned char* callAdapting = nullptr; // the call's per-stream flags on the device, or none
    bool mirror = false;          // every stream's weights into hostAllWeights after each call
    int side = 0;                 // the history window in use
    std::size_t lastCall = 0;     // samples of the last call: the window's newest length - 1 are after them
    int columns = 0;              // steps taken in the current block
    // A batch call's held streams (processBatch): their flags here and on the device, or none.
    const unsigned char* hostHeld = nullptr;
    std::vector<std::uint64_t> sanitised; // per stream
    std::vector<blockrls::State> initialStates; // every stream's state after reset(), built by prepare()
    double lastMs = 0.0;

    std::size_t streams() const { return static_cast<std::size_t>(geometry.streams); }
    // What happens between the two parts of a processSplit() call.
    struct Split {
        std::size_t at = 0;
        bool restart = false, adaptAfter = true;
    };
    // n samples of every stream: stream s's at micIn + s x pitch, refIn + s x pitch x channels, outOut + s x pitch;
    // with a split, stream 0's weights at split->at land in hostWeights.
    void runChunk(const float* micIn, const float* refIn, float* outOut, std::size_t pitch, std::size_t n, bool adapting,
                  const Split* split = nullptr);
    // Loops over calls of at most maxCall samples.
    void run(const float* micIn, const float* refIn, float* outOut, std::size_t samples, bool adapting);
    void runSteps(int begin, int end, std::size_t offset, bool adapting);
    // Stream i's part of buffer `b` (which holds `per` elements a stream) to zero, queued.
    template <typename T>
    void clearPart(DeviceBuffer<T>& b, std::size_t per, std::size_t i);
    // Queued on the stream, no wait: stream `index`'s weights after the steps so far into hostWeights
    // (count of them), and every stream's P = I / delta from the next block on (the current one ends).
    void enqueueWeights(int index, std::size_t count);
    void enqueueRestart();
};

void GpuBlockRls::Impl::enqueueWeights(int index, std::size_t count)
{
    blockrls::currentWeights(geometry, buffers, index, columns, weights.get(), stream.get());
    QUELL_CUDA_CHECK(cudaMemcpyAsync(hostWeights.get(), weights.get(), count * sizeof(float), cudaMemcpyDeviceToHost, stream.get()));
}

void GpuBlockRls::Impl::enqueueRestart()
{
    blockrls::finishBlock(geometry, buffers, columns, true, stream.get());
    columns = 0;
}

GpuBlockRls::GpuBlockRls() : impl_(std::make_unique<Impl>()) {}
GpuBlockRls::~GpuBlockRls() = default;

namespace {

// Why the settings cannot run, device aside (empty: they can).
std::string settingsWhyNot(const dsp::RlsSettings& settings, int blockSize, std::size_t maxCall, int streams)
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
    if (streams < 1 || streams > GpuBlockRls::kMaxStreams)
        return "GPU block RLS: 1 to " + std::to_string(GpuBlockRls::kMaxStreams) + " streams (got " + std::to_string(streams) + ")";
    return {};
}

} // namespace

std::string GpuBlockRls::whyNot(const dsp::RlsSettings& settings, int blockSize, std::size_t maxCall, int streams)
{
    std::string why = settingsWhyNot(settings, blockSize, maxCall, streams);
    if (!why.empty())
        return why;
    try {
        const std::size_t stride = (static_cast<std::size_t>(settings.totalTaps()) + 63) / 64 * 64;
        std::size_t free = 0, total = 0;
        QUELL_CUDA_CHECK(cudaMemGetInfo(&free, &total));
        const int splits = blockrls::tiledVSplits(settings.totalTaps(), blockSize);
        const std::size_t need = static_cast<std::size_t>(streams)
                                 * (stride * stride * sizeof(float) + 4 * static_cast<std::size_t>(blockSize) * stride * sizeof(float)
                                    + blockrls::tiledVPartsPerStream(splits, blockSize, static_cast<int>(stride)) * sizeof(float));
        if (need > free)
            return "GPU block RLS: needs " + std::to_string(need >> 20) + " MiB of device memory, " + std::to_string(free >> 20) + " MiB free";
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

void GpuBlockRls::prepare(const dsp::RlsSettings& settings, int blockSize, std::size_t maxCall, int streams)
{
    if (const std::string why = settingsWhyNot(settings, blockSize, maxCall, streams); !why.empty())
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
    g.streams = streams;
    g.callPitch = maxCall;
    g.vSplits = blockrls::tiledVSplits(g.taps, blockSize);
    // Every buffer holds the streams' equal parts one after another (blockrls::streamBuffers).
    const std::size_t S = static_cast<std::size_t>(g.stride), k = static_cast<std::size_t>(blockSize);
    const std::size_t n = static_cast<std::size_t>(streams), C = static_cast<std::size_t>(g.channels);
    m.P.allocate(n * S * S);
    m.w0.allocate(n * S);
    m.weights.allocate(S);
    m.U.allocate(n * k * S);
    m.V.allocate(n * k * S);
    m.Z.allocate(n * k * S);
    m.vParts.allocate(n * blockrls::tiledVPartsPerStream(g.vSplits, blockSize, g.stride));
    m.vTickets.allocate(n * blockrls::tiledVTicketsPerStream(g.vSplits, blockSize, g.stride));
    for (auto& w : m.window)
        w.allocate(n * C * g.historyPitch);
    m.mic.allocate(n * maxCall);
    m.out.allocate(n * maxCall);
    for (auto* buffer : {&m.G, &m.H, &m.A, &m.C})
        buffer->allocate(n * k * k);
    for (auto* buffer : {&m.b, &m.s, &m.y0, &m.d, &m.stepLambda})
        buffer->allocate(n * k);
    m.traceParts.allocate(n * S / 4);
    m.paused.allocate(n * k);
    m.state.allocate(n);
    m.hostMic.allocate(n * maxCall);
    m.hostRef.allocate(n * C * maxCall);
    m.hostOut.allocate(n * maxCall);
    m.hostWeights.allocate(S);
    m.streamAdapting.allocate(n);
    m.restartMarks.allocate(n);
    m.streamHeld.allocate(n);
    m.hostControls.allocate(3 * n);
    m.mirror = false;
    // reset() runs on the engine's worker (a reset asked while running): it allocates nothing.
    blockrls::State initial{};
    initial.mu = 1.0;
    initial.lambdaNow = settings.lambda;
    initial.delta = settings.delta;
    initial.pendingMu = 1.0f;
    initial.reinitP = 1; // the first block's start writes P = I / delta
    m.initialStates.assign(n, initial);
    m.sanitised.assign(n, 0);
    m.buffers = blockrls::Buffers{m.P.get(), m.w0.get(), m.U.get(), m.V.get(), m.Z.get(), m.G.get(), m.H.get(), m.A.get(),
                                  m.C.get(), m.b.get(), m.s.get(), m.y0.get(), m.d.get(), m.paused.get(), m.stepLambda.get(),
                                  m.traceParts.get(), m.state.get(), m.vParts.get(), m.vTickets.get()};
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
    if (m.vTickets.size() > 0)
        QUELL_CUDA_CHECK(cudaMemsetAsync(m.vTickets.get(), 0, m.vTickets.bytes(), s));
    QUELL_CUDA_CHECK(cudaMemcpyAsync(m.state.get(), m.initialStates.data(), m.initialStates.size() * sizeof(blockrls::State),
                                     cudaMemcpyHostToDevice, s));
    m.stream.synchronize();
    m.side = 0;
    m.lastCall = 0;
    m.columns = 0;
    std::fill(m.sanitised.begin(), m.sanitised.end(), 0);
}

void GpuBlockRls::Impl::runSteps(int begin, int end, std::size_t offset, bool adapting)
{
    const blockrls::Geometry& g = geometry;
    cudaStream_t s = stream.get();
    const float* history = window[side].get();
    const double silence = settings.silenceFloor * static_cast<double>(g.taps);
    blockrls::buildColumns(g, buffers, history, mic.get(), static_cast<int>(offset), begin, end, adapting, callAdapting, silence, s);
    if (begin == 0)
        blockrls::startBlock(g, buffers, s);
    blockrls::computeV(g, buffers, begin, end, s);
    blockrls::computeGram(g, buffers, begin, end, s);
    // The recurrence in launches of at most the check interval, so that each holds at most one bounded-trace
    // check of each stream; every stream checks at its own samples, as the CPU's (State::sinceCheck).
    const int interval = settings.traceCheckSamples;
    for (int from = begin; from < end;) {
        const int to = std::min(end, from + interval);
        blockrls::recurrence(g, buffers, from, to, interval, settings.lambda, out.get() + offset + static_cast<std::size_t>(from - begin), s);
        from = to;
    }
    columns = end;
    if (columns == g.block) {
        blockrls::finishBlock(g, buffers, columns, false, s);
        columns = 0;
    }
}

void GpuBlockRls::Impl::runChunk(const float* micIn, const float* refIn, float* outOut, std::size_t pitch, std::size_t n, bool adapting,
                                 const Split* split)
{
    const blockrls::Geometry& g = geometry;
    const std::size_t C = static_cast<std::size_t>(g.channels), L = static_cast<std::size_t>(g.length), N = streams();
    // Sanitise into the pinned staging (each stream's far-end channels planar), counting as dsp::Rls does.
    for (std::size_t i = 0; i < N; ++i) {
        if (hostHeld != nullptr && hostHeld[i])
            continue;   // its staging is not read: every stage passes it by
        const float* micS = micIn + i * pitch;
        const float* refS = refIn + i * pitch * C;
        float* stagedMic = hostMic.get() + i * maxCall;
        float* stagedRef = hostRef.get() + i * C * maxCall;
        std::uint64_t bad = 0;
        for (std::size_t t = 0; t < n; ++t) {
            bool badSample = !std::isfinite(micS[t]);
            stagedMic[t] = badSample ? 0.0f : micS[t];
            for (std::size_t c = 0; c < C; ++c) {
                const float x = refS[t * C + c];
                const bool finite = std::isfinite(x);
                badSample = badSample || !finite;
                stagedRef[c * maxCall + t] = finite ? x : 0.0f;
            }
            bad += badSample ? 1 : 0;
        }
        sanitised[i] += bad;
    }
    cudaStream_t s = stream.get();
    // The other window takes the newest L - 1 samples of this one, then the call's samples (a row per
    // stream and far-end channel).
    const int next = 1 - side;
    const std::size_t pitchBytes = g.historyPitch * sizeof(float), rows = N * C;
    if (L > 1)
        QUELL_CUDA_CHECK(cudaMemcpy2DAsync(window[next].get(), pitchBytes, window[side].get() + lastCall, pitchBytes, (L - 1) * sizeof(float),
                                           rows, cudaMemcpyDeviceToDevice, s));
    QUELL_CUDA_CHECK(cudaMemcpy2DAsync(window[next].get() + (L - 1), pitchBytes, hostRef.get(), maxCall * sizeof(float), n * sizeof(float),
                                       rows, cudaMemcpyHostToDevice, s));
    QUELL_CUDA_CHECK(cudaMemcpy2DAsync(mic.get(), maxCall * sizeof(float), hostMic.get(), maxCall * sizeof(float), n * sizeof(float), N,
                                       cudaMemcpyHostToDevice, s));
    if (buffers.held != nullptr)
        blockrls::carryHeldHistory(g, buffers.held, window[side].get(), lastCall, window[next].get(), n, s);
    side = next;
    lastCall = n;
    start.record(s);
    // At the split, in the stream's order and with no wait: what copyWeights(), restartCovariance() and
    // setAdaptation() would do between two calls.
    auto atSplit = [&] {
        enqueueWeights(0, static_cast<std::size_t>(g.taps));
        if (split->restart)
            enqueueRestart();
        adapting = split->adaptAfter;
    };
    for (std::size_t pos = 0; pos < n;) {
        if (split != nullptr && pos == split->at)
            atSplit();
        const std::size_t limit = split != nullptr && pos < split->at ? split->at : n;
        const int begin = columns;
        const int end = begin + static_cast<int>(std::min<std::size_t>(limit - pos, static_cast<std::size_t>(g.block - begin)));
        runSteps(begin, end, pos, adapting);
        pos += static_cast<std::size_t>(end - begin);
    }
    if (split != nullptr && split->at == n)
        atSplit();
    stop.record(s);
    QUELL_CUDA_CHECK(cudaMemcpy2DAsync(hostOut.get(), maxCall * sizeof(float), out.get(), maxCall * sizeof(float), n * sizeof(float), N,
                                       cudaMemcpyDeviceToHost, s));
    if (mirror) {
        // Every call of a mirrored batch ends a block (processBatch checks): the weights are w0.
        const std::size_t taps = static_cast<std::size_t>(g.taps);
        QUELL_CUDA_CHECK(cudaMemcpy2DAsync(hostAllWeights.get(), taps * sizeof(float), w0.get(), static_cast<std::size_t>(g.stride) * sizeof(float),
                                           taps * sizeof(float), N, cudaMemcpyDeviceToHost, s));
    }
    stream.synchronize();
    lastMs = stop.since(start);
    for (std::size_t i = 0; i < N; ++i)
        if (hostHeld == nullptr || !hostHeld[i])
            std::copy(hostOut.get() + i * maxCall, hostOut.get() + i * maxCall + n, outOut + i * pitch);
}

void GpuBlockRls::Impl::run(const float* micIn, const float* refIn, float* outOut, std::size_t samples, bool adapting)
{
    if (geometry.taps == 0)
        throw std::logic_error("GpuBlockRls: process or processBatch before prepare");
    const std::size_t C = static_cast<std::size_t>(geometry.channels);
    double ms = 0.0;
    for (std::size_t done = 0; done < samples;) {
        const std::size_t n = std::min(samples - done, maxCall);
        runChunk(micIn + done, refIn + done * C, outOut + done, samples, n, adapting);
        ms += lastMs;
        done += n;
    }
    lastMs = ms;
}

void GpuBlockRls::process(const float* mic, const float* ref, float* out, std::size_t samples)
{
    if (impl_->geometry.streams > 1)
        throw std::logic_error("GpuBlockRls::process: this filter runs " + std::to_string(impl_->geometry.streams)
                               + " streams: use processBatch");
    impl_->run(mic, ref, out, samples, adapting_);
}

void GpuBlockRls::processSplit(const float* mic, const float* ref, float* out, std::size_t samples, std::size_t split, bool restart,
                               bool adaptAfter, float* weightsOut, std::size_t count)
{
    Impl& m = *impl_;
    if (m.geometry.taps == 0)
        throw std::logic_error("GpuBlockRls: processSplit before prepare");
    if (m.geometry.streams > 1)
        throw std::logic_error("GpuBlockRls::processSplit: this filter runs " + std::to_string(m.geometry.streams)
                               + " streams: use processBatch");
    if (split > samples)
        throw std::out_of_range("GpuBlockRls::processSplit: the split is after the last sample");
    if (count > static_cast<std::size_t>(m.geometry.taps))
        throw std::out_of_range("GpuBlockRls::processSplit: more weights asked than taps");
    if (samples > m.maxCall) {
        // Longer than one call: the pieces in turn (more than one round trip, as before).
        const std::size_t C = static_cast<std::size_t>(m.geometry.channels);
        process(mic, ref, out, split);
        copyWeights(weightsOut, count);
        if (restart)
            restartCovariance();
        setAdaptation(adaptAfter);
        process(mic + split, ref + split * C, out + split, samples - split);
        return;
    }
    const Impl::Split at{split, restart, adaptAfter};
    m.runChunk(mic, ref, out, samples, samples, adapting_, &at);
    adapting_ = adaptAfter;
    std::copy(m.hostWeights.get(), m.hostWeights.get() + count, weightsOut);
}

void GpuBlockRls::processBatch(const float* mic, const float* ref, float* out, std::size_t samples)
{
    if (impl_->mirror && samples % static_cast<std::size_t>(impl_->geometry.block) != 0)
        throw std::logic_error("GpuBlockRls::processBatch: with the weights mirrored every call must end a block");
    impl_->run(mic, ref, out, samples, adapting_);
}

void GpuBlockRls::processBatch(const float* mic, const float* ref, float* out, std::size_t samples, std::size_t pitch,
                               const unsigned char* adapting, const unsigned char* restart, const unsigned char* held)
{
    Impl& m = *impl_;
    const std::size_t n = m.streams();
    if (m.geometry.taps == 0)
        throw std::logic_error("GpuBlockRls: processBatch before prepare");
    if (samples > m.maxCall)
        throw std::invalid_argument("GpuBlockRls::processBatch: a call with stream controls holds at most maxCall samples");
    if (m.columns != 0 || samples % static_cast<std::size_t>(m.geometry.block) != 0)
        throw std::logic_error("GpuBlockRls::processBatch: calls with stream controls begin and end blocks (a multiple of k samples)");
    if (pitch < samples)
        throw std::invalid_argument("GpuBlockRls::processBatch: the streams' pitch is shorter than the call");
    cudaStream_t s = m.stream.get();
    std::copy(adapting, adapting + n, m.hostControls.get());
    bool anyRestart = false;
    for (std::size_t i = 0; i < n; ++i) {
        m.hostControls.get()[n + i] = restart != nullptr && restart[i] ? 1 : 0;
        anyRestart = anyRestart || m.hostControls.get()[n + i];
    }
    QUELL_CUDA_CHECK(cudaMemcpyAsync(m.streamAdapting.get(), m.hostControls.get(), n, cudaMemcpyHostToDevice, s));
    if (anyRestart) {
        QUELL_CUDA_CHECK(cudaMemcpyAsync(m.restartMarks.get(), m.hostControls.get() + n, n, cudaMemcpyHostToDevice, s));
        blockrls::restartStreams(m.geometry, m.buffers, m.restartMarks.get(), s);
    }
    bool anyHeld = false;
    for (std::size_t i = 0; i < n && held != nullptr; ++i) {
        m.hostControls.get()[2 * n + i] = held[i] ? 1 : 0;
        anyHeld = anyHeld || held[i];
    }
    if (anyHeld) {
        QUELL_CUDA_CHECK(cudaMemcpyAsync(m.streamHeld.get(), m.hostControls.get() + 2 * n, n, cudaMemcpyHostToDevice, s));
        m.buffers.held = m.streamHeld.get();
        m.hostHeld = m.hostControls.get() + 2 * n;
    }
    m.callAdapting = m.streamAdapting.get();
    auto clear = [&m] {
        m.callAdapting = nullptr;
        m.buffers.held = nullptr;
        m.hostHeld = nullptr;
    };
    try {
        m.runChunk(mic, ref, out, pitch, samples, true);
    } catch (...) {
        clear();
        throw;
    }
    clear();
}

void GpuBlockRls::mirrorWeights()
{
    Impl& m = *impl_;
    if (m.geometry.taps == 0)
        throw std::logic_error("GpuBlockRls::mirrorWeights before prepare");
    m.hostAllWeights.allocate(m.streams() * static_cast<std::size_t>(m.geometry.taps));
    std::fill(m.hostAllWeights.get(), m.hostAllWeights.get() + m.streams() * static_cast<std::size_t>(m.geometry.taps), 0.0f);
    m.mirror = true;
}

const float* GpuBlockRls::mirroredWeights(int stream) const
{
    const Impl& m = *impl_;
    if (!m.mirror)
        throw std::logic_error("GpuBlockRls::mirroredWeights: mirrorWeights() was not called");
    if (stream < 0 || stream >= m.geometry.streams)
        throw std::out_of_range("GpuBlockRls::mirroredWeights: no stream " + std::to_string(stream));
    return m.hostAllWeights.get() + static_cast<std::size_t>(stream) * static_cast<std::size_t>(m.geometry.taps);
}

template <typename T>
void GpuBlockRls::Impl::clearPart(DeviceBuffer<T>& b, std::size_t per, std::size_t i)
{
    QUELL_CUDA_CHECK(cudaMemsetAsync(b.get() + i * per, 0, per * sizeof(T), stream.get()));
}

void GpuBlockRls::resetStream(int index)
{
    Impl& m = *impl_;
    if (index < 0 || index >= m.geometry.streams)
        throw std::out_of_range("GpuBlockRls::resetStream: no stream " + std::to_string(index));
    const blockrls::Geometry& g = m.geometry;
    const std::size_t S = static_cast<std::size_t>(g.stride), k = static_cast<std::size_t>(g.block), i = static_cast<std::size_t>(index);
    m.clearPart(m.P, S * S, i);
    m.clearPart(m.w0, S, i);
    for (auto* b : {&m.U, &m.V, &m.Z})
        m.clearPart(*b, k * S, i);
    for (auto& w : m.window)
        m.clearPart(w, static_cast<std::size_t>(g.channels) * g.historyPitch, i);
    for (auto* b : {&m.G, &m.H, &m.A, &m.C})
        m.clearPart(*b, k * k, i);
    for (auto* b : {&m.b, &m.s, &m.y0, &m.d, &m.stepLambda})
        m.clearPart(*b, k, i);
    m.clearPart(m.traceParts, S / 4, i);
    m.clearPart(m.paused, k, i);
    QUELL_CUDA_CHECK(cudaMemcpyAsync(m.state.get() + i, &m.initialStates[i], sizeof(blockrls::State), cudaMemcpyHostToDevice, m.stream.get()));
    m.stream.synchronize();
    m.sanitised[i] = 0;
    if (m.mirror)
        std::fill_n(m.hostAllWeights.get() + i * static_cast<std::size_t>(g.taps), static_cast<std::size_t>(g.taps), 0.0f);
}

std::vector<float> GpuBlockRls::weights(int stream) const
{
    Impl& m = *impl_;
    std::vector<float> w(static_cast<std::size_t>(m.geometry.taps));
    copyWeights(w.data(), w.size(), stream);
    return w;
}

void GpuBlockRls::copyWeights(float* out, std::size_t count, int stream) const
{
    Impl& m = *impl_;
    if (count > static_cast<std::size_t>(m.geometry.taps))
        throw std::out_of_range("GpuBlockRls::copyWeights: more weights asked than taps");
    if (stream < 0 || stream >= m.geometry.streams)
        throw std::out_of_range("GpuBlockRls::copyWeights: no stream " + std::to_string(stream));
    m.enqueueWeights(stream, count);
    m.stream.synchronize();
    std::copy(m.hostWeights.get(), m.hostWeights.get() + count, out);
}

void GpuBlockRls::restartCovariance()
{
    Impl& m = *impl_;
    m.enqueueRestart();
    m.stream.synchronize();
}

void GpuBlockRls::setRestartDelta(int stream, double delta)
{
    Impl& m = *impl_;
    if (stream < 0 || stream >= m.geometry.streams)
        throw std::out_of_range("GpuBlockRls::setRestartDelta: no stream " + std::to_string(stream));
    dsp::validateDelta(delta);
    blockrls::State* st = m.state.get() + stream;
    QUELL_CUDA_CHECK(cudaMemcpyAsync(&st->delta, &delta, sizeof(delta), cudaMemcpyHostToDevice, m.stream.get()));
    m.stream.synchronize();
}

void GpuBlockRls::restartCovariance(int stream)
{
    Impl& m = *impl_;
    if (stream < 0 || stream >= m.geometry.streams)
        throw std::out_of_range("GpuBlockRls::restartCovariance: no stream " + std::to_string(stream));
    static constexpr int asked = 1;
    blockrls::State* st = m.state.get() + stream;
    QUELL_CUDA_CHECK(cudaMemcpyAsync(&st->restartAsked, &asked, sizeof(asked), cudaMemcpyHostToDevice, m.stream.get()));
    m.stream.synchronize();
}

dsp::RlsHealth GpuBlockRls::health(int stream) const
{
    const Impl& m = *impl_;
    if (stream < 0 || stream >= m.geometry.streams)
        throw std::out_of_range("GpuBlockRls::health: no stream " + std::to_string(stream));
    blockrls::State st{};
    QUELL_CUDA_CHECK(cudaMemcpyAsync(&st, m.state.get() + stream, sizeof(st), cudaMemcpyDeviceToHost, m.stream.get()));
    m.stream.synchronize();
    dsp::RlsHealth h;
    h.pausedSamples = st.pausedSamples;
    h.reinitialisations = st.reinitialisations;
    h.sanitisedSamples = m.sanitised[static_cast<std::size_t>(stream)];
    return h;
}

int GpuBlockRls::streams() const { return impl_->geometry.streams; }

int GpuBlockRls::taps() const { return impl_->geometry.taps; }
int GpuBlockRls::blockSize() const { return impl_->geometry.block; }
double GpuBlockRls::lastKernelMilliseconds() const { return impl_->lastMs; }

} // namespace quell::gpu
