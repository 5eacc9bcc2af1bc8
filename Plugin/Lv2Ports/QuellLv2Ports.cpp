// SPDX-License-Identifier: GPL-3.0-or-later
// quell-ports.lv2: the canceller as an LV2 plugin whose parameters are control ports, for hosts that set
// plugins through ports and have no plugin GUI or patch messages: PipeWire's filter-chain, jalv's
// console, Carla, Ardour's generic controls. The JUCE plugin's LV2 (Quell.lv2, with its editor) exposes
// its parameters as patch parameters only, which such hosts cannot set.
//
// Ports: the microphone, the far end (the sidechain), the output; filter length (taps per far-end
// channel at the canceller's 16 kHz, 0 = automatic), suppression (dB), freeze, bypass; the latency it
// adds (reported as LV2 latency). A thin adapter over engine::RealtimeEngine, as the SPA backend is: the
// canceller runs on the engine's worker thread, one block (10 ms at the host rate) behind, so a GPU never
// blocks the host's audio thread; the CPU filter is chosen within half a core.
//
// Threading (the LV2 threading classes): instantiate, activate, deactivate, cleanup from the host's
// instantiation thread; run from the audio thread, where nothing allocates, locks or waits. A new filter
// length rebuilds the canceller off the audio thread: through the host's worker (the worker extension)
// when it offers one, else at the next activate().
#include <lv2/core/lv2.h>
#include <lv2/worker/worker.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <vector>

#include "aec/EchoCancellerSettings.h"
#include "dsp/Crossfade.h"
#include "dsp/DelayLine.h"
#include "engine/RealtimeEngine.h"

namespace {

using namespace quell;

constexpr const char* kUri = "urn:quell:aec-ports";

enum Port : uint32_t { Mic, FarEnd, Out, Taps, Suppression, Freeze, Bypass, Latency, PortCount };

// The filter length a port value asks for: 0 (or anything under 0.5) automatic, else 8..8192.
int tapsFromPort(float value)
{
    if (!(value >= 0.5f))
        return 0;
    return std::clamp(static_cast<int>(std::lround(value)), aec::kMinTaps, aec::kMaxTaps);
}

struct QuellPorts {
    const float* ports[PortCount] = {};   // the inputs (audio and control)
    float* out = nullptr;
    float* latency = nullptr;
    double rate = 48000.0;
    int block = 480;   // 10 ms at the host rate: the engine's host block and its added delay
    aec::EchoCancellerSettings settings;
    std::unique_ptr<engine::RealtimeEngine> engine;
    dsp::DelayLine dry;   // the microphone by the engine's latency: the bypass path, aligned with the wet one
    std::vector<float> dryBlock, wetBlock, silence;
    dsp::Crossfade bypass;   // 1: all dry; moves to its target over 10 ms (no click)
    aec::CancellerControls applied;
    int tapsWanted = 0;          // the length the port asks for (audio thread)
    int tapsScheduled = 0;       // the length last handed to the worker (audio thread)
    LV2_Worker_Schedule* schedule = nullptr;

    void prepareEngine()
    {
        engine::EngineSpec spec;
        spec.hostRate = static_cast<int>(rate);
        spec.maxHostBlock = block;
        spec.micChannels = 1;
        spec.aec = settings;
        auto e = std::make_unique<engine::RealtimeEngine>();
        e->prepare(spec);
        engine = std::move(e);
        engine->setControls(applied);
        dry.prepare(1, engine->latencySamples());
    }
};

LV2_Handle instantiate(const LV2_Descriptor*, double rate, const char*, const LV2_Feature* const* features)
{
    if (!(rate >= 8000.0 && rate <= 384000.0))
        return nullptr;
    try {
        auto q = std::make_unique<QuellPorts>();
        q->rate = rate;
        q->block = std::max(16, static_cast<int>(rate / 100.0));
        for (int i = 0; features && features[i]; ++i)
            if (std::strcmp(features[i]->URI, LV2_WORKER__schedule) == 0)
                q->schedule = static_cast<LV2_Worker_Schedule*>(features[i]->data);
        // A live host: the CPU filter must fit its share of a core (CpuFilterChoice.h).
        q->settings.cpuRealtimeBudget = 0.5;
        q->prepareEngine();
        q->dryBlock.assign(static_cast<std::size_t>(q->block), 0.0f);
        q->wetBlock.assign(static_cast<std::size_t>(q->block), 0.0f);
        q->silence.assign(static_cast<std::size_t>(q->block), 0.0f);
        q->bypass.prepare(q->block, 0.0f);
        return q.release();
    } catch (const std::exception&) {
        return nullptr;   // the host reports that the plugin could not be instantiated
    }
}

void connectPort(LV2_Handle instance, uint32_t port, void* data)
{
    auto* q = static_cast<QuellPorts*>(instance);
    if (port == Out)
        q->out = static_cast<float*>(data);
    else if (port == Latency)
        q->latency = static_cast<float*>(data);
    else if (port < PortCount)
        q->ports[port] = static_cast<const float*>(data);
}

void activate(LV2_Handle instance)
{
    auto* q = static_cast<QuellPorts*>(instance);
    // Without a worker a new filter length waits for this (non-real-time) call.
    if (q->tapsWanted != q->settings.taps) {
        q->settings.taps = q->tapsWanted;
        try {
            q->prepareEngine();
        } catch (const std::exception&) {
        }
    }
    q->tapsScheduled = q->settings.taps;
    if (q->engine)
        q->engine->requestReset();
    q->dry.reset();
}

float portValue(const QuellPorts& q, Port p, float fallback)
{
    return q.ports[p] ? *q.ports[p] : fallback;
}

void run(LV2_Handle instance, uint32_t n)
{
    auto* q = static_cast<QuellPorts*>(instance);
    const float* mic = q->ports[Mic];
    const float* far = q->ports[FarEnd];
    float* out = q->out;
    if (!mic || !out || !q->engine)
        return;

    aec::CancellerControls controls = q->applied;
    controls.adapt = !(portValue(*q, Freeze, 0.0f) > 0.5f);
    controls.suppressionDb = std::clamp(static_cast<double>(portValue(*q, Suppression, 40.0f)), 0.0, 60.0);
    if (!(controls == q->applied)) {
        q->engine->setControls(controls);   // lock-free
        q->applied = controls;
    }
    q->tapsWanted = tapsFromPort(portValue(*q, Taps, 0.0f));
    if (q->tapsWanted != q->tapsScheduled && q->schedule) {
        const int taps = q->tapsWanted;
        if (q->schedule->schedule_work(q->schedule->handle, sizeof taps, &taps) == LV2_WORKER_SUCCESS)
            q->tapsScheduled = taps;
    }
    const float target = portValue(*q, Bypass, 0.0f) > 0.5f ? 1.0f : 0.0f;

    for (uint32_t offset = 0; offset < n;) {
        const uint32_t len = std::min<uint32_t>(static_cast<uint32_t>(q->block), n - offset);
        // The far end as given, or silence where the host left the sidechain unconnected.
        const float* micIn[1] = {mic + offset};
        const float* farIn[1] = {far ? far + offset : q->silence.data()};
        float* wet[1] = {q->wetBlock.data()};
        q->engine->process(micIn, farIn, wet, static_cast<int>(len));
        float* dryOut[1] = {q->dryBlock.data()};
        q->dry.process(micIn, dryOut, 1, len, static_cast<std::size_t>(q->dry.maxDelay()));
        float* mixed[1] = {out + offset};
        q->bypass.process(wet, dryOut, mixed, 1, len, target);
        offset += len;
    }
    if (q->latency)
        *q->latency = static_cast<float>(q->engine->latencySamples());
}

void deactivate(LV2_Handle) {}

void cleanup(LV2_Handle instance)
{
    delete static_cast<QuellPorts*>(instance);
}

// The worker: a new filter length, on the host's worker thread (the engine rebuilds its canceller and
// swaps it in between two blocks; the audio thread never waits for it).
LV2_Worker_Status work(LV2_Handle instance, LV2_Worker_Respond_Function, LV2_Worker_Respond_Handle, uint32_t size,
                       const void* data)
{
    auto* q = static_cast<QuellPorts*>(instance);
    if (size != sizeof(int))
        return LV2_WORKER_ERR_UNKNOWN;
    int taps = 0;
    std::memcpy(&taps, data, sizeof taps);
    q->settings.taps = taps;
    try {
        q->engine->applySettings(q->settings);
    } catch (const std::exception&) {
        return LV2_WORKER_ERR_UNKNOWN;
    }
    return LV2_WORKER_SUCCESS;
}

LV2_Worker_Status workResponse(LV2_Handle, uint32_t, const void*)
{
    return LV2_WORKER_SUCCESS;
}

const void* extensionData(const char* uri)
{
    static const LV2_Worker_Interface worker = {work, workResponse, nullptr};
    return std::strcmp(uri, LV2_WORKER__interface) == 0 ? &worker : nullptr;
}

const LV2_Descriptor kDescriptor = {kUri, instantiate, connectPort, activate, run, deactivate, cleanup, extensionData};

} // namespace

extern "C" LV2_SYMBOL_EXPORT const LV2_Descriptor* lv2_descriptor(uint32_t index)
{
    return index == 0 ? &kDescriptor : nullptr;
}
