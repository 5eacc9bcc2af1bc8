// SPDX-License-Identifier: GPL-3.0-or-later
// quellaec: Quell's echo canceller as a GStreamer element (plugin "quell", libgstquell.so).
//
//   gst-launch-1.0 quellaec name=aec ! audioconvert ! wavenc ! filesink location=out.wav
//     filesrc location=mic.wav ! wavparse ! audioconvert ! audioresample ! aec.sink
//     filesrc location=ref.wav ! wavparse ! audioconvert ! audioresample ! aec.far
// (one command line; the README has it to paste)
//
// Pads: "sink" (the microphone: F32LE, mono), "far" (the far end, what the loudspeaker plays: F32LE, mono
// or stereo, at the microphone's rate) and "src" (the echo-cancelled microphone, F32LE mono at the same
// rate). The two inputs are taken sample-aligned from their first samples, as quell-render takes two
// files (its far-end delay search finds the echo's delay within the canceller); a far end that ends early
// counts as silence.
//
// Every instance in a process with the same settings is a call of one shared many-calls engine
// (engine::SharedCall, SharedCallEngine): on the GPU one batched filter runs all of them, on the CPU one
// pool of threads. The samples are quell-render's with the same settings (the shared engine's taps when
// automatic: 1024); a call whose block misses its batch (its pipeline late by more than the batch's wait)
// is handled as SharedCallEngine.h says. With shared=false an instance runs an engine of its own
// (engine::RealtimeEngine offline, quell-render's, with quell-render's automatic taps).
//
// The output is the input delayed by the pipeline; the element holds those samples back, timestamps its
// output as the microphone's (sample t of the output is sample t of the microphone, cancelled), reports
// the hold (and for a shared engine its wait for the other calls and a batch) as its latency, and plays the held
// samples out at the end of the stream. Properties (taps, backend, filter, suppression, comfort-noise,
// shared) are read when the stream starts.
//
// Threading: GstAggregator's: aggregate() on the source pad's streaming thread; properties under the
// object lock.
#include <gst/base/gstadapter.h>
#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "aec/Backend.h"
#include "aec/EchoCancellerSettings.h"
#include "aec/FilterKind.h"
#include "engine/RealtimeEngine.h"
#include "engine/SharedCall.h"

GST_DEBUG_CATEGORY_STATIC(quell_aec_debug);
#define GST_CAT_DEFAULT quell_aec_debug

namespace {

using namespace quell;

// The engine's block: 10 ms. It is also the engine's own delay (one block in flight), so it adds to the
// latency; the samples do not depend on it (the engine's output does not depend on its blocks).
int hostBlockFor(int rate) { return std::max(64, rate / 100); }
constexpr int kMinRate = 8000, kMaxRate = 192000;

#define QUELL_AEC_CAPS(channels)                                                                                      \
    "audio/x-raw, format = (string) F32LE, layout = (string) interleaved, rate = (int) [ 8000, 192000 ], channels = " \
    "(int) " channels

GstStaticPadTemplate micTemplate = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(QUELL_AEC_CAPS("1")));
GstStaticPadTemplate farTemplate = GST_STATIC_PAD_TEMPLATE("far", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(QUELL_AEC_CAPS("[ 1, 2 ]")));
GstStaticPadTemplate srcTemplate = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(QUELL_AEC_CAPS("1")));

enum Property { kPropTaps = 1, kPropBackend, kPropFilter, kPropSuppression, kPropComfortNoise, kPropShared, kPropCalls, kPropThreadPriority, kPropDescription, kPropTiming };

// What one stream needs between start and stop.
struct Stream {
    std::unique_ptr<engine::RealtimeEngine> engine;   // one of these two
    std::unique_ptr<engine::SharedCall> call;
    int rate = 0, farChannels = 1;
    std::size_t hostBlock = 0;
    std::size_t toDrop = 0;          // the engine's first outputs: its latency, not the microphone's samples
    std::uint64_t emitted = 0;       // output samples pushed
    GstClockTime basePts = GST_CLOCK_TIME_NONE;
    bool flushed = false;            // the held samples were played out (end of stream)
    std::vector<float> mic, farInterleaved, farPlanar, out, pending;
};

struct Settings {
    int taps = 0;
    aec::Backend backend = aec::Backend::Auto;
    aec::FilterKind filter = aec::FilterKind::Auto;
    double suppressionDb = 40.0;
    bool comfortNoise = true;
    bool shared = true;
    int calls = 0;                    // the shared engine's streams (0: automatic)
    int threadPriority = engine::MultiStreamSettings{}.threadPriority;   // its pool's (0: normal threads)
    std::string description;          // what runs, once a stream has started
    std::weak_ptr<const engine::SharedCallEngine> engine;   // the shared engine it joined (its timing)
};

} // namespace

G_BEGIN_DECLS
#define GST_TYPE_QUELL_AEC (gst_quell_aec_get_type())
G_DECLARE_FINAL_TYPE(GstQuellAec, gst_quell_aec, GST, QUELL_AEC, GstAggregator)
G_END_DECLS

struct _GstQuellAec {
    GstAggregator parent;
    GstAggregatorPad* micPad;
    GstAggregatorPad* farPad;
    GstAdapter* micAdapter;
    GstAdapter* farAdapter;
    Settings* settings;
    Stream* stream;
};

G_DEFINE_TYPE(GstQuellAec, gst_quell_aec, GST_TYPE_AGGREGATOR)

namespace {

int capsInt(GstPad* pad, const char* field)
{
    GstCaps* caps = gst_pad_get_current_caps(pad);
    int value = 0;
    if (caps != nullptr) {
        if (gst_caps_get_size(caps) > 0)
            gst_structure_get_int(gst_caps_get_structure(caps, 0), field, &value);
        gst_caps_unref(caps);
    }
    return value;
}

// The engine for this stream's rate and far-end channels, with the properties as they are now.
bool prepareStream(GstQuellAec* self)
{
    Stream& s = *self->stream;
    s.rate = capsInt(GST_PAD(self->micPad), "rate");
    const int farRate = capsInt(GST_PAD(self->farPad), "rate");
    const int farChannels = capsInt(GST_PAD(self->farPad), "channels");
    if (s.rate < kMinRate || s.rate > kMaxRate) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("no microphone format"), ("the sink pad has no rate"));
        return false;
    }
    if (farRate != 0 && farRate != s.rate) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("the far end's rate differs from the microphone's"),
                          ("far %d Hz, microphone %d Hz: put audioresample before the far pad", farRate, s.rate));
        return false;
    }
    s.farChannels = farChannels > 0 ? farChannels : 1;
    engine::EngineSpec spec;
    spec.hostRate = s.rate;
    spec.micChannels = 1;
    spec.farEndChannels = s.farChannels;
    s.hostBlock = static_cast<std::size_t>(hostBlockFor(s.rate));
    spec.maxHostBlock = static_cast<int>(s.hostBlock);
    spec.offline = true;
    GST_OBJECT_LOCK(self);
    const Settings settings = *self->settings;
    GST_OBJECT_UNLOCK(self);
    spec.aec.taps = settings.taps;
    spec.aec.backend = settings.backend;
    spec.aec.filter = settings.filter;
    spec.aec.suppressor.enabled = settings.suppressionDb > 0.0;
    if (settings.suppressionDb > 0.0)
        spec.aec.suppressor.maxAttenuationDb = settings.suppressionDb;
    spec.aec.suppressor.comfortNoise = settings.comfortNoise;
    // The shared engine's calls differ in their suppression only by their controls, so that calls that
    // differ there still share it; no suppressor at all (suppression 0, as quell-render has it: no
    // suppressor's latency) is another engine.
    engine::SharedCallSettings shared;
    shared.engine.canceller = spec.aec;
    shared.engine.canceller.suppressor = {};
    shared.engine.canceller.suppressor.enabled = spec.aec.suppressor.enabled;
    shared.engine.farEndChannels = s.farChannels;
    shared.engine.maxStreams = settings.calls;
    shared.engine.threadPriority = settings.threadPriority;
    aec::CancellerControls controls;
    controls.suppressionDb = settings.suppressionDb;
    controls.comfortNoise = settings.comfortNoise;
    std::string description;
    int latency = 0;
    GstClockTime wait = 0;
    try {
        if (settings.shared) {
            auto call = std::make_unique<engine::SharedCall>();
            call->open(shared, s.rate);
            call->setControls(controls);
            latency = call->holdSamples();
            wait = static_cast<GstClockTime>(std::chrono::duration_cast<std::chrono::nanoseconds>(call->engine().engineDelay()).count());
            description = call->engine().description() + "; shared: call " + std::to_string(call->stream() + 1) + " of "
                          + std::to_string(call->engine().capacity());
            GST_OBJECT_LOCK(self);
            self->settings->engine = call->engineHandle();
            GST_OBJECT_UNLOCK(self);
            s.call = std::move(call);
        } else {
            auto e = std::make_unique<engine::RealtimeEngine>();
            e->prepare(spec);
            latency = e->latencySamples();
            s.toDrop = static_cast<std::size_t>(latency);
            description = e->stats().mode;
            s.engine = std::move(e);
        }
    } catch (const std::exception& e) {
        GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("the echo canceller cannot run these settings"), ("%s", e.what()));
        return false;
    }
    s.mic.assign(s.hostBlock, 0.0f);
    s.farInterleaved.assign(s.hostBlock * static_cast<std::size_t>(s.farChannels), 0.0f);
    s.farPlanar.assign(s.hostBlock * static_cast<std::size_t>(s.farChannels), 0.0f);
    s.out.assign(s.hostBlock, 0.0f);
    s.pending.clear();
    GST_OBJECT_LOCK(self);
    self->settings->description = description;
    GST_OBJECT_UNLOCK(self);
    GST_INFO_OBJECT(self, "%d Hz, %d far-end channel(s): %s; latency %d samples", s.rate, s.farChannels, description.c_str(), latency);
    const GstClockTime hold = gst_util_uint64_scale_int(static_cast<guint64>(latency), GST_SECOND, s.rate) + wait;
    gst_aggregator_set_latency(GST_AGGREGATOR(self), hold, hold);
    return true;
}

// n samples of microphone (from the adapter) and far end (from its adapter, zeros past its end, or all
// zeros with `tail`: the held samples' flush) through the canceller; the outputs past the latency go to
// pending.
void run(GstQuellAec* self, std::size_t n, std::size_t farAvailable, bool tail)
{
    Stream& s = *self->stream;
    const std::size_t C = static_cast<std::size_t>(s.farChannels);
    for (std::size_t done = 0; done < n;) {
        const std::size_t m = std::min(n - done, s.hostBlock);
        if (tail)
            std::fill(s.mic.begin(), s.mic.begin() + static_cast<std::ptrdiff_t>(m), 0.0f);
        else
            gst_adapter_copy(self->micAdapter, s.mic.data(), 0, m * sizeof(float));
        const std::size_t farHere = tail ? 0 : std::min(m, farAvailable > done ? farAvailable - done : 0);
        std::fill(s.farInterleaved.begin() + static_cast<std::ptrdiff_t>(farHere * C), s.farInterleaved.begin() + static_cast<std::ptrdiff_t>(m * C),
                  0.0f);   // the far end's samples past its end are silence
        if (farHere > 0)
            gst_adapter_copy(self->farAdapter, s.farInterleaved.data(), 0, farHere * C * sizeof(float));
        for (std::size_t c = 0; c < C; ++c)
            for (std::size_t i = 0; i < m; ++i)
                s.farPlanar[c * s.hostBlock + i] = s.farInterleaved[i * C + c];
        const float* mic[1] = {s.mic.data()};
        const float* far[2] = {s.farPlanar.data(), s.farPlanar.data() + (C > 1 ? s.hostBlock : 0)};
        if (s.call) {
            const std::span<const float> farSpans[2] = {{far[0], m}, {far[1], m}};
            s.call->process({mic[0], m}, {farSpans, C}, s.pending, done + m < n);   // more queued: it has fallen behind
        } else {
            float* out[1] = {s.out.data()};
            s.engine->process(mic, far, out, static_cast<int>(m));
        }
        if (!tail) {
            gst_adapter_flush(self->micAdapter, m * sizeof(float));
            if (farHere > 0)
                gst_adapter_flush(self->farAdapter, farHere * C * sizeof(float));
        }
        if (!s.call) {
            const std::size_t skip = std::min(s.toDrop, m);
            s.toDrop -= skip;
            s.pending.insert(s.pending.end(), s.out.begin() + static_cast<std::ptrdiff_t>(skip), s.out.begin() + static_cast<std::ptrdiff_t>(m));
        }
        done += m;
    }
}

GstFlowReturn pushPending(GstQuellAec* self, std::size_t count)
{
    Stream& s = *self->stream;
    count = std::min(count, s.pending.size());
    if (count == 0)
        return GST_FLOW_OK;
    GstBuffer* buffer = gst_buffer_new_allocate(nullptr, count * sizeof(float), nullptr);
    gst_buffer_fill(buffer, 0, s.pending.data(), count * sizeof(float));
    s.pending.erase(s.pending.begin(), s.pending.begin() + static_cast<std::ptrdiff_t>(count));
    const GstClockTime base = GST_CLOCK_TIME_IS_VALID(s.basePts) ? s.basePts : 0;
    GST_BUFFER_PTS(buffer) = base + gst_util_uint64_scale_int(s.emitted, GST_SECOND, s.rate);
    GST_BUFFER_DURATION(buffer) = base + gst_util_uint64_scale_int(s.emitted + count, GST_SECOND, s.rate) - GST_BUFFER_PTS(buffer);
    GST_BUFFER_OFFSET(buffer) = s.emitted;
    GST_BUFFER_OFFSET_END(buffer) = s.emitted + count;
    s.emitted += count;
    return gst_aggregator_finish_buffer(GST_AGGREGATOR(self), buffer);
}

void takeQueued(GstQuellAec* self, GstAggregatorPad* pad, GstAdapter* adapter, bool isMic)
{
    while (GstBuffer* buffer = gst_aggregator_pad_pop_buffer(pad)) {
        if (isMic && !GST_CLOCK_TIME_IS_VALID(self->stream->basePts) && gst_adapter_available(adapter) == 0
            && self->stream->emitted == 0)
            self->stream->basePts = GST_BUFFER_PTS(buffer);
        gst_adapter_push(adapter, buffer);
    }
}

GstFlowReturn aggregate(GstAggregator* agg, gboolean /*timeout*/)
{
    GstQuellAec* self = GST_QUELL_AEC(agg);
    Stream& s = *self->stream;
    takeQueued(self, self->micPad, self->micAdapter, true);
    takeQueued(self, self->farPad, self->farAdapter, false);
    const bool micEnded = gst_aggregator_pad_is_eos(self->micPad);
    const bool farEnded = gst_aggregator_pad_is_eos(self->farPad);
    const std::size_t micAvailable = gst_adapter_available(self->micAdapter) / sizeof(float);
    if (!s.engine && !s.call) {
        if (micAvailable == 0 && micEnded)
            return GST_FLOW_EOS;
        // A live aggregate may come (on its timeout) before the far end has its format: the canceller
        // is made for the far end's channels, so it waits for them (or for the far end's end).
        if (capsInt(GST_PAD(self->farPad), "channels") == 0 && !farEnded)
            return GST_FLOW_OK;
        if (!prepareStream(self))
            return GST_FLOW_ERROR;
    } else if (capsInt(GST_PAD(self->micPad), "rate") != s.rate) {
        // The canceller, its resamplers and what it learnt are the old rate's.
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("the microphone's rate changed mid-stream"),
                          ("%d Hz, then %d Hz: put audioresample before the sink pad", s.rate, capsInt(GST_PAD(self->micPad), "rate")));
        return GST_FLOW_NOT_NEGOTIATED;
    } else if (const int channels = capsInt(GST_PAD(self->farPad), "channels"), rate = capsInt(GST_PAD(self->farPad), "rate");
               (channels != 0 && channels != s.farChannels) || (rate != 0 && rate != s.rate)) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("the far end's format changed mid-stream"),
                          ("%d channel(s) at %d Hz, then %d at %d Hz", s.farChannels, s.rate, channels, rate));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    const std::size_t farAvailable = gst_adapter_available(self->farAdapter) / (sizeof(float) * static_cast<std::size_t>(s.farChannels));
    const std::size_t n = farEnded ? micAvailable : std::min(micAvailable, farAvailable);
    try {
        if (n > 0)
            run(self, n, farAvailable, false);
        if (micEnded && gst_adapter_available(self->micAdapter) == 0 && !s.flushed) {
            // The held samples: the engine's latency of zeros pushes them out (a shared call counts its own).
            if (s.call) {
                s.call->finish(s.pending);
                s.call->close();   // its stream is free for another call
            } else if (const std::size_t hold = static_cast<std::size_t>(s.engine->latencySamples()); hold > 0) {
                run(self, hold, 0, true);
            }
            s.flushed = true;
        }
    } catch (const std::exception& e) {
        // A shared engine that failed (its GPU lost): the stream ends with the reason, not the process.
        GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("the echo canceller failed"), ("%s", e.what()));
        return GST_FLOW_ERROR;
    }
    const GstFlowReturn ret = pushPending(self, s.pending.size());
    if (ret != GST_FLOW_OK)
        return ret;
    return s.flushed ? GST_FLOW_EOS : GST_FLOW_OK;
}

GstFlowReturn updateSrcCaps(GstAggregator* agg, GstCaps* /*downstream*/, GstCaps** ret)
{
    GstQuellAec* self = GST_QUELL_AEC(agg);
    const int rate = capsInt(GST_PAD(self->micPad), "rate");
    if (rate == 0)
        return GST_AGGREGATOR_FLOW_NEED_DATA;
    *ret = gst_caps_new_simple("audio/x-raw", "format", G_TYPE_STRING, "F32LE", "layout", G_TYPE_STRING, "interleaved", "rate",
                               G_TYPE_INT, rate, "channels", G_TYPE_INT, 1, nullptr);
    return GST_FLOW_OK;
}

void clearStream(GstQuellAec* self)
{
    *self->stream = Stream{};
    gst_adapter_clear(self->micAdapter);
    gst_adapter_clear(self->farAdapter);
}

gboolean start(GstAggregator* agg)
{
    clearStream(GST_QUELL_AEC(agg));
    return TRUE;
}

gboolean stop(GstAggregator* agg)
{
    clearStream(GST_QUELL_AEC(agg));
    return TRUE;
}

GstFlowReturn flush(GstAggregator* agg)
{
    // A flushing seek: the canceller starts again from the new position.
    clearStream(GST_QUELL_AEC(agg));
    return GST_FLOW_OK;
}

void setProperty(GObject* object, guint id, const GValue* value, GParamSpec* pspec)
{
    GstQuellAec* self = GST_QUELL_AEC(object);
    GST_OBJECT_LOCK(self);
    Settings& s = *self->settings;
    try {
        switch (id) {
        case kPropTaps: s.taps = g_value_get_int(value); break;
        case kPropBackend: s.backend = aec::parseBackend("backend", g_value_get_string(value) ? g_value_get_string(value) : ""); break;
        case kPropFilter: s.filter = aec::parseFilterKind("filter", g_value_get_string(value) ? g_value_get_string(value) : ""); break;
        case kPropSuppression: s.suppressionDb = g_value_get_double(value); break;
        case kPropComfortNoise: s.comfortNoise = g_value_get_boolean(value) != FALSE; break;
        case kPropShared: s.shared = g_value_get_boolean(value) != FALSE; break;
        case kPropCalls: s.calls = g_value_get_int(value); break;
        case kPropThreadPriority: s.threadPriority = g_value_get_int(value); break;
        default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
        }
    } catch (const std::exception& e) {
        g_warning("quellaec: %s", e.what());   // the value stays as it was
    }
    GST_OBJECT_UNLOCK(self);
}

void getProperty(GObject* object, guint id, GValue* value, GParamSpec* pspec)
{
    GstQuellAec* self = GST_QUELL_AEC(object);
    GST_OBJECT_LOCK(self);
    const Settings& s = *self->settings;
    switch (id) {
    case kPropTaps: g_value_set_int(value, s.taps); break;
    case kPropBackend: g_value_set_string(value, aec::toString(s.backend)); break;
    case kPropFilter: g_value_set_string(value, aec::toString(s.filter)); break;
    case kPropSuppression: g_value_set_double(value, s.suppressionDb); break;
    case kPropComfortNoise: g_value_set_boolean(value, s.comfortNoise); break;
    case kPropShared: g_value_set_boolean(value, s.shared); break;
    case kPropCalls: g_value_set_int(value, s.calls); break;
    case kPropThreadPriority: g_value_set_int(value, s.threadPriority); break;
    case kPropDescription: g_value_set_string(value, s.description.c_str()); break;
    case kPropTiming: {
        const auto engine = s.engine.lock();
        g_value_set_string(value, engine ? engine->timingText().c_str() : "");
        break;
    }
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    GST_OBJECT_UNLOCK(self);
}

void finalize(GObject* object)
{
    GstQuellAec* self = GST_QUELL_AEC(object);
    delete self->stream;
    delete self->settings;
    g_object_unref(self->micAdapter);
    g_object_unref(self->farAdapter);
    G_OBJECT_CLASS(gst_quell_aec_parent_class)->finalize(object);
}

GstAggregatorPad* addSinkPad(GstQuellAec* self, const char* name)
{
    GstPadTemplate* templ = gst_element_class_get_pad_template(GST_ELEMENT_GET_CLASS(self), name);
    auto* pad = GST_AGGREGATOR_PAD(g_object_new(GST_TYPE_AGGREGATOR_PAD, "name", name, "direction", GST_PAD_SINK, "template", templ, nullptr));
    gst_element_add_pad(GST_ELEMENT(self), GST_PAD(pad));
    return pad;
}

} // namespace

static void gst_quell_aec_init(GstQuellAec* self)
{
    self->settings = new Settings();
    self->stream = new Stream();
    self->micAdapter = gst_adapter_new();
    self->farAdapter = gst_adapter_new();
    self->micPad = addSinkPad(self, "sink");
    self->farPad = addSinkPad(self, "far");
}

static void gst_quell_aec_class_init(GstQuellAecClass* klass)
{
    GObjectClass* object = G_OBJECT_CLASS(klass);
    GstElementClass* element = GST_ELEMENT_CLASS(klass);
    GstAggregatorClass* aggregator = GST_AGGREGATOR_CLASS(klass);
    object->set_property = setProperty;
    object->get_property = getProperty;
    object->finalize = finalize;
    const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
    g_object_class_install_property(object, kPropTaps,
                                    g_param_spec_int("taps", "Taps", "Adaptive filter length at the canceller's rate (0: automatic)", 0,
                                                     aec::kMaxTaps, 0, flags));
    g_object_class_install_property(object, kPropBackend,
                                    g_param_spec_string("backend", "Backend", "Where the filter runs: auto, cpu or gpu", "auto", flags));
    g_object_class_install_property(object, kPropFilter,
                                    g_param_spec_string("filter", "Filter", "The adaptive filter: auto, rls, kalman or nlms", "auto", flags));
    g_object_class_install_property(object, kPropSuppression,
                                    g_param_spec_double("suppression", "Suppression",
                                                        "Most attenuation of the residual echo suppressor in dB (0: off)", 0.0, 60.0, 40.0,
                                                        flags));
    g_object_class_install_property(object, kPropComfortNoise,
                                    g_param_spec_boolean("comfort-noise", "Comfort noise", "Fill what the suppressor removes with the noise floor",
                                                         TRUE, flags));
    g_object_class_install_property(
        object, kPropShared,
        g_param_spec_boolean("shared", "Shared",
                             "Run as a call of the process's shared many-calls engine (one GPU batch for every instance with the same "
                             "settings; automatic taps: 1024), or with an engine of its own (quell-render's automatic taps)",
                             TRUE, flags));
    g_object_class_install_property(object, kPropCalls,
                                    g_param_spec_int("calls", "Calls",
                                                     "Streams of the shared engine, taken at its start (0: automatic, 64 with a GPU, "
                                                     "else 8); instances share an engine only when this is the same",
                                                     0, 4096, 0, flags));
    g_object_class_install_property(object, kPropThreadPriority,
                                    g_param_spec_int("thread-priority", "Thread priority",
                                                     "Real-time priority the shared engine's threads ask for (SCHED_FIFO 1 to 99; "
                                                     "0: normal threads, beside GStreamer's own)",
                                                     0, 99, engine::MultiStreamSettings{}.threadPriority, flags));
    g_object_class_install_property(object, kPropDescription,
                                    g_param_spec_string("description", "Description", "The canceller that runs (once a stream has started)", "",
                                                        static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
    g_object_class_install_property(object, kPropTiming,
                                    g_param_spec_string("timing", "Timing",
                                                        "The shared engine's batches since it started: how many, the blocks that missed "
                                                        "one, and the wait, the batch and each block's turnaround (median / p99.9 ms)",
                                                        "", static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
    gst_element_class_add_static_pad_template_with_gtype(element, &micTemplate, GST_TYPE_AGGREGATOR_PAD);
    gst_element_class_add_static_pad_template_with_gtype(element, &farTemplate, GST_TYPE_AGGREGATOR_PAD);
    gst_element_class_add_static_pad_template_with_gtype(element, &srcTemplate, GST_TYPE_AGGREGATOR_PAD);   // the base class makes it
    gst_element_class_set_static_metadata(element, "Quell acoustic echo canceller", "Filter/Effect/Audio",
                                          "Removes the far end's echo from the microphone (GPU RLS, or a CPU filter)",
                                          "The Quell developers");
    aggregator->aggregate = aggregate;
    aggregator->update_src_caps = updateSrcCaps;
    aggregator->start = start;
    aggregator->stop = stop;
    aggregator->flush = flush;
    GST_DEBUG_CATEGORY_INIT(quell_aec_debug, "quellaec", 0, "Quell echo canceller");
}

static gboolean pluginInit(GstPlugin* plugin)
{
    return gst_element_register(plugin, "quellaec", GST_RANK_NONE, GST_TYPE_QUELL_AEC);
}

#define PACKAGE "quell"
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, quell, "Quell acoustic echo canceller", pluginInit, QUELL_VERSION, "GPL", "Quell",
                  "Quell")
