// SPDX-License-Identifier: GPL-3.0-or-later
// libspa-aec-quell: Quell as the echo-cancellation backend of PipeWire's echo-cancel module (a SPA plugin
// with one factory, SPA_NAME_AEC, that gives the spa_audio_aec interface), so that desktop Linux cancels
// echo system-wide with Quell's canceller, on the GPU or the CPU, as it does with WebRTC's:
//
//   context.modules = [ { name = libpipewire-module-echo-cancel
//                         args = { library.name = aec/libspa-aec-quell  aec.args = { quell.taps = 4096 } } } ]
//
// A thin adapter over engine::RealtimeEngine: run() is the audio callback (the module's data thread); the
// canceller runs on the engine's worker thread, so that a GPU never blocks the graph, one block behind.
// The module's capture (rec), playback (play) and output have the same channels: one or two.
//
// aec.args (all optional): quell.taps (8..8192 per far-end channel; default automatic), quell.backend
// (cpu, gpu, auto), quell.filter (rls, kalman, nlms, auto), quell.suppression (dB, 0..60), quell.block (the
// block the engine is laid out for, in samples at the graph rate; default 10 ms; also the quantum it asks
// the graph for through the interface's `latency`), quell.offline (true: no worker, run() cancels in place
// and returns when done; for tests and batch graphs).
//
// Threading: the SPA contract: init, set_props, activate, deactivate and clear from the main thread; run
// from the data thread, where the engine never allocates, locks or waits.
#include <spa/interfaces/audio/aec.h>
#include <spa/support/plugin.h>
#include <spa/utils/dict.h>
#include <spa/utils/hook.h>
#include <spa/utils/names.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "aec/Backend.h"
#include "aec/EchoCancellerSettings.h"
#include "aec/FilterKind.h"
#include "engine/RealtimeEngine.h"
#include "io/CommandLine.h"

namespace {

using namespace quell;

struct QuellAec {
    spa_handle handle;   // first: the SPA hands this pointer back
    spa_audio_aec aec;
    spa_hook_list hooks;
    aec::EchoCancellerSettings settings;
    engine::EngineSpec spec;
    bool offline = false;
    int blockSamples = 0;   // 0: 10 ms at the graph rate
    std::unique_ptr<engine::RealtimeEngine> engine;
    std::string latency;
};

// The value of `key` in aec.args, if given.
const char* lookup(const spa_dict* args, const char* key)
{
    return args ? spa_dict_lookup(args, key) : nullptr;
}

// The aec.args Quell takes; throws io::UsageError or std::invalid_argument naming the argument that is wrong.
void readArgs(QuellAec& q, const spa_dict* args)
{
    if (const char* v = lookup(args, "quell.taps"))
        q.settings.taps = io::parseInt("quell.taps", v, aec::kMinTaps, aec::kMaxTaps);
    if (const char* v = lookup(args, "quell.suppression")) {
        const int db = io::parseInt("quell.suppression", v, 0, 60);
        q.settings.suppressor.enabled = db > 0;
        q.settings.suppressor.maxAttenuationDb = db;
    }
    if (const char* v = lookup(args, "quell.block"))
        q.blockSamples = io::parseInt("quell.block", v, 16, 8192);
    if (const char* v = lookup(args, "quell.backend"))
        q.settings.backend = aec::parseBackend("quell.backend", v);
    if (const char* v = lookup(args, "quell.filter"))
        q.settings.filter = aec::parseFilterKind("quell.filter", v);
    if (const char* v = lookup(args, "quell.offline"))
        q.offline = std::strcmp(v, "true") == 0 || std::strcmp(v, "1") == 0;
}

int addListener(void* object, spa_hook* listener, const spa_audio_aec_events* events, void* data)
{
    auto* q = static_cast<QuellAec*>(object);
    spa_hook_list_append(&q->hooks, listener, events, data);
    return 0;
}

int init(void* object, const spa_dict* args, const spa_audio_info_raw* info)
{
    auto* q = static_cast<QuellAec*>(object);
    if (!info || info->rate == 0 || info->channels < 1 || info->channels > 2)
        return -EINVAL;
    try {
        readArgs(*q, args);
        // A real-time graph: the CPU filter must fit its share of a core (CpuFilterChoice.h).
        if (!q->offline && q->settings.cpuRealtimeBudget <= 0.0)
            q->settings.cpuRealtimeBudget = 0.5;
        engine::EngineSpec spec;
        spec.hostRate = static_cast<int>(info->rate);
        spec.maxHostBlock = q->blockSamples > 0 ? q->blockSamples : static_cast<int>(info->rate / 100);
        spec.micChannels = static_cast<int>(info->channels);
        spec.farEndChannels = static_cast<int>(info->channels);
        spec.aec = q->settings;
        spec.offline = q->offline;
        auto e = std::make_unique<engine::RealtimeEngine>();
        e->prepare(spec);
        q->engine = std::move(e);
        q->spec = spec;
        q->latency = std::to_string(spec.maxHostBlock) + "/" + std::to_string(info->rate);
        q->aec.latency = q->latency.c_str();
        return 0;
    } catch (const io::UsageError&) {
        return -EINVAL;
    } catch (const std::invalid_argument&) {
        return -EINVAL;
    } catch (const aec::BackendUnavailable&) {
        return -ENODEV;
    } catch (const std::exception&) {
        return -EIO;
    }
}

int run(void* object, const float* rec[], const float* play[], float* out[], uint32_t nSamples)
{
    auto* q = static_cast<QuellAec*>(object);
    if (!q->engine)
        return -EIO;
    q->engine->process(rec, play, out, static_cast<int>(nSamples));
    return 0;
}

int setProps(void* object, const spa_dict* args)
{
    auto* q = static_cast<QuellAec*>(object);
    try {
        const auto before = q->settings;
        readArgs(*q, args);
        if (!q->engine)
            return 0;
        aec::CancellerControls controls;
        controls.suppressionDb = q->settings.suppressor.enabled ? q->settings.suppressor.maxAttenuationDb : 0.0;
        q->engine->setControls(controls);
        if (q->settings.taps != before.taps || q->settings.backend != before.backend || q->settings.filter != before.filter)
            q->engine->applySettings(q->settings);
        return 0;
    } catch (const std::exception&) {
        return -EINVAL;
    }
}

int activate(void* object)
{
    auto* q = static_cast<QuellAec*>(object);
    if (q->engine)
        q->engine->requestReset();
    return 0;
}

int deactivate(void*)
{
    return 0;
}

const spa_audio_aec_methods kMethods = {
    SPA_VERSION_AUDIO_AEC_METHODS, addListener, init, run, setProps, activate, deactivate, nullptr, nullptr, nullptr,
};

int getInterface(spa_handle* handle, const char* type, void** iface)
{
    if (!handle || !iface)
        return -EINVAL;
    auto* q = reinterpret_cast<QuellAec*>(handle);
    if (std::strcmp(type, SPA_TYPE_INTERFACE_AUDIO_AEC) != 0)
        return -ENOENT;
    *iface = &q->aec;
    return 0;
}

int clear(spa_handle* handle)
{
    auto* q = reinterpret_cast<QuellAec*>(handle);
    q->~QuellAec();
    return 0;
}

size_t getSize(const spa_handle_factory*, const spa_dict*)
{
    return sizeof(QuellAec);
}

int initHandle(const spa_handle_factory*, spa_handle* handle, const spa_dict*, const spa_support*, uint32_t)
{
    if (!handle)
        return -EINVAL;
    auto* q = new (handle) QuellAec{};
    q->handle.version = SPA_VERSION_HANDLE;
    q->handle.get_interface = getInterface;
    q->handle.clear = clear;
    q->aec.iface = SPA_INTERFACE_INIT(SPA_TYPE_INTERFACE_AUDIO_AEC, SPA_VERSION_AUDIO_AEC, &kMethods, q);
    q->aec.name = "quell";
    q->aec.info = nullptr;
    q->aec.latency = nullptr;
    spa_hook_list_init(&q->hooks);
    return 0;
}

const spa_interface_info kInterfaces[] = {{SPA_TYPE_INTERFACE_AUDIO_AEC}};

int enumInterfaceInfo(const spa_handle_factory*, const spa_interface_info** info, uint32_t* index)
{
    if (!info || !index)
        return -EINVAL;
    if (*index >= 1)
        return 0;
    *info = &kInterfaces[(*index)++];
    return 1;
}

const spa_handle_factory kFactory = {
    SPA_VERSION_HANDLE_FACTORY, SPA_NAME_AEC, nullptr, getSize, initHandle, enumInterfaceInfo,
};

} // namespace

extern "C" SPA_EXPORT int spa_handle_factory_enum(const spa_handle_factory** factory, uint32_t* index)
{
    if (!factory || !index)
        return -EINVAL;
    if (*index >= 1)
        return 0;
    *factory = &kFactory;
    ++*index;
    return 1;
}
