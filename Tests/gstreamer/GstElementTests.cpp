// SPDX-License-Identifier: GPL-3.0-or-later
// The quellaec GStreamer element (Plugin/GStreamer): as gst-launch-1.0 runs it from the plugin path, and
// in this process through GStreamer's API (its pads, its latency, several instances at once).
#include <catch2/catch.hpp>

#include <gst/gst.h>
#include <sndfile.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <tuple>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "aec/FilterPlan.h"
#include "engine/SharedCall.h"
#include "io/WavFile.h"
#include "support/Signals.h"

namespace fs = std::filesystem;
using namespace quell;

namespace {

// A 4 s scene at 48 kHz, float WAVs: a coloured far end through a decaying room (2000 taps at 48 kHz,
// 10 ms of bulk delay), a near end talking in the last second, noise at -70 dB.
struct Scene {
    fs::path dir, mic, ref;
    std::size_t frames = 4 * 48000;
    std::size_t nearFrom = 3 * 48000;
};

Scene writeScene(const std::string& name)
{
    Scene s;
    s.dir = fs::temp_directory_path() / ("quell-gst-" + name + "-" + std::to_string(::getpid()));
    fs::create_directories(s.dir);
    s.mic = s.dir / "mic.wav";
    s.ref = s.dir / "ref.wav";
    const auto x = test::colouredNoise(s.frames, 3, 0.2);
    auto h = test::randomSystem(2000, 4, 400.0);
    h.insert(h.begin(), 480, 0.0);
    const auto y = test::convolve(std::span<const double>(x), std::span<const double>(h));
    const auto near = test::colouredNoise(s.frames, 5, 0.05), noise = test::whiteNoise(s.frames, 6, 3e-4);
    std::vector<float> mic(s.frames), ref(s.frames);
    for (std::size_t i = 0; i < s.frames; ++i) {
        ref[i] = static_cast<float>(x[i]);
        mic[i] = static_cast<float>(y[i] + noise[i] + (i >= s.nearFrom ? near[i] : 0.0));
    }
    const io::AudioFormat f{48000, 1, SF_FORMAT_WAV | SF_FORMAT_FLOAT, "FLOAT"};
    io::writeAudioAtomically(s.mic.string(), f, {mic});
    io::writeAudioAtomically(s.ref.string(), f, {ref});
    return s;
}

std::string pipelineFor(const Scene& s, const std::string& out, const std::string& properties)
{
    return "quellaec name=aec " + properties + " ! wavenc ! filesink location=" + out + " filesrc location=" + s.mic.string()
           + " ! wavparse ! audioconvert ! aec.sink filesrc location=" + s.ref.string() + " ! wavparse ! audioconvert ! aec.far";
}

double energy(const std::vector<float>& v, std::size_t from, std::size_t to)
{
    double e = 0.0;
    for (std::size_t i = from; i < to; ++i)
        e += double(v[i]) * v[i];
    return e;
}

// GStreamer in this process, with the plugin's folder on its path.
void initGstreamer()
{
    static const bool done = [] {
        // The build's plugin first; a path already set (the GPU machine's carried plugins) after it.
        std::string dir = fs::path(QUELL_GST_PLUGIN_PATH).parent_path().string();
        if (const char* set = std::getenv("GST_PLUGIN_PATH"); set != nullptr && *set != '\0')
            dir += std::string(":") + set;
        ::setenv("GST_PLUGIN_PATH", dir.c_str(), 1);
        gst_init(nullptr, nullptr);
        return true;
    }();
    (void)done;
}

// Runs a gst_parse_launch pipeline to its end; empty on success, else the error.
std::string runPipeline(const std::string& description)
{
    GError* error = nullptr;
    GstElement* pipeline = gst_parse_launch(description.c_str(), &error);
    if (pipeline == nullptr || error != nullptr) {
        const std::string why = error ? error->message : "gst_parse_launch failed";
        if (error)
            g_error_free(error);
        if (pipeline)
            gst_object_unref(pipeline);
        return why;
    }
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    GstBus* bus = gst_element_get_bus(pipeline);
    GstMessage* msg = gst_bus_timed_pop_filtered(bus, 120 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    std::string result = msg == nullptr ? "timed out" : "";
    if (msg != nullptr && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
        GError* err = nullptr;
        gchar* debug = nullptr;
        gst_message_parse_error(msg, &err, &debug);
        result = std::string(err->message) + (debug ? std::string(" (") + debug + ")" : "");
        g_error_free(err);
        g_free(debug);
    }
    if (msg)
        gst_message_unref(msg);
    gst_object_unref(bus);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
    return result;
}

} // namespace

TEST_CASE("gst-launch-1.0 runs quellaec from two WAV files into a WAV file: quell-render's samples, the echo cancelled", "[gstreamer]")
{
    const Scene s = writeScene("launch");
    // As a call of the shared engine (the default; with no suppressor too), and with an engine of its own
    // at quell-render's automatic settings.
    const auto [properties, renderOptions] = GENERATE(table<std::string, std::string>(
        {{"backend=cpu taps=1024", "--backend cpu --taps 1024"},
         {"backend=cpu taps=1024 suppression=0", "--backend cpu --taps 1024 --suppression 0"},
         {"backend=cpu shared=false", "--backend cpu"}}));
    INFO(properties);
    const fs::path gstOut = s.dir / "gst.wav", renderOut = s.dir / "render.wav";
    const std::string plugins = fs::path(QUELL_GST_PLUGIN_PATH).parent_path().string();
    const std::string launch = "GST_PLUGIN_PATH=" + plugins + " gst-launch-1.0 -q " + pipelineFor(s, gstOut.string(), properties) + " > "
                               + (s.dir / "gst.log").string() + " 2>&1";
    INFO(launch);
    REQUIRE(std::system(launch.c_str()) == 0);
    const std::string render = std::string(QUELL_RENDER_PATH) + " --quiet " + renderOptions + " --mic " + s.mic.string() + " --ref "
                               + s.ref.string() + " --out " + renderOut.string();
    REQUIRE(std::system(render.c_str()) == 0);
    const io::AudioData g = io::readAudio(gstOut.string()), r = io::readAudio(renderOut.string()), m = io::readAudio(s.mic.string());
    REQUIRE(g.format.sampleRate == 48000);
    REQUIRE(g.frames() == s.frames);   // the held samples come out at the end: nothing lost, nothing added
    REQUIRE(r.frames() == s.frames);
    double maxDiff = 0.0;
    for (std::size_t i = 0; i < s.frames; ++i)
        maxDiff = std::max(maxDiff, double(std::fabs(g.channels[0][i] - r.channels[0][i])));
    INFO("largest difference from quell-render " << maxDiff);
    CHECK(maxDiff <= 1e-6);
    // The echo in the last second of far-end single talk before the near end, and the near end kept.
    const double reduction = 10.0 * std::log10(energy(m.channels[0], s.nearFrom - 48000, s.nearFrom)
                                               / energy(g.channels[0], s.nearFrom - 48000, s.nearFrom));
    INFO("echo reduction " << reduction << " dB");
    CHECK(reduction > 20.0);
    fs::remove_all(s.dir);   // each generated run writes the scene again
}

TEST_CASE("quellaec reports its latency, its canceller, and refuses far ends of another rate", "[gstreamer]")
{
    initGstreamer();
    GstElement* aec = gst_element_factory_make("quellaec", nullptr);
    REQUIRE(aec != nullptr);
    GstPad* sink = gst_element_get_static_pad(aec, "sink");
    GstPad* far = gst_element_get_static_pad(aec, "far");
    GstPad* src = gst_element_get_static_pad(aec, "src");
    CHECK(sink != nullptr);
    CHECK(far != nullptr);
    CHECK(src != nullptr);
    for (GstPad* p : {sink, far, src})
        if (p)
            gst_object_unref(p);
    gchar* backend = nullptr;
    g_object_set(aec, "backend", "cpu", "taps", 512, nullptr);
    g_object_get(aec, "backend", &backend, nullptr);
    CHECK(std::string(backend) == "cpu");
    g_free(backend);
    gst_object_unref(aec);

    // A live pipeline: the element's hold is in the latency the pipeline reports.
    GError* error = nullptr;
    GstElement* pipeline = gst_parse_launch(
        "quellaec name=aec backend=cpu taps=512 ! fakesink sync=true "
        "audiotestsrc is-live=true wave=pink-noise samplesperbuffer=48 ! audio/x-raw,format=F32LE,rate=48000,channels=1 ! aec.sink "
        "audiotestsrc is-live=true wave=pink-noise samplesperbuffer=48 ! audio/x-raw,format=F32LE,rate=48000,channels=1 ! aec.far",
        &error);
    INFO((error != nullptr ? error->message : "parsed"));
    REQUIRE(error == nullptr);
    REQUIRE(pipeline != nullptr);
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    // Asked at the element's source pad: the sources' latency and the element's (not the sink's deadline).
    GstElement* element = gst_bin_get_by_name(GST_BIN(pipeline), "aec");
    GstPad* out = gst_element_get_static_pad(element, "src");
    GstQuery* query = gst_query_new_latency();
    REQUIRE(gst_pad_query(out, query));
    gst_object_unref(out);
    gboolean live = FALSE;
    GstClockTime minLatency = 0, maxLatency = 0;
    gst_query_parse_latency(query, &live, &minLatency, &maxLatency);
    gst_query_unref(query);
    gchar* description = nullptr;
    g_object_get(element, "description", &description, nullptr);
    const std::string what = description ? description : "";
    g_free(description);
    gst_object_unref(element);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
    // The element holds what a call of the shared engine does for the same stream: the pipeline's delay
    // and a block (10 ms), and the engine's delay (its wait for the other calls and a batch).
    engine::SharedCallSettings shared;
    shared.engine.canceller.backend = aec::Backend::Cpu;
    shared.engine.canceller.taps = 512;
    engine::SharedCall reference;
    reference.open(shared, 48000);
    const GstClockTime expected = gst_util_uint64_scale_int(static_cast<guint64>(reference.holdSamples()), GST_SECOND, 48000)
                                  + static_cast<GstClockTime>(std::chrono::duration_cast<std::chrono::nanoseconds>(reference.engine().engineDelay()).count());
    INFO("latency " << minLatency << " ns (the call's " << reference.holdSamples() << " samples and the engine's delay: " << expected << " ns), canceller "
                    << what);
    CHECK(live);
    CHECK(minLatency >= expected);
    CHECK(minLatency <= expected + 3 * GST_MSECOND);   // plus what the sources report (1 ms buffers)
    CHECK(what.find("512") != std::string::npos);
    CHECK(what.find("shared: call 1 of") != std::string::npos);

    const std::string bad = runPipeline(
        "quellaec name=aec backend=cpu ! fakesink "
        "audiotestsrc num-buffers=20 ! audio/x-raw,format=F32LE,rate=48000,channels=1 ! aec.sink "
        "audiotestsrc num-buffers=20 ! audio/x-raw,format=F32LE,rate=44100,channels=1 ! aec.far");
    INFO(bad);
    CHECK(bad.find("rate") != std::string::npos);
}

TEST_CASE("quellaec: four pipelines at once in one process give each its own canceller's samples", "[gstreamer]")
{
    initGstreamer();
    const Scene s = writeScene("parallel");
    const fs::path alone = s.dir / "alone.wav";
    REQUIRE(runPipeline(pipelineFor(s, alone.string(), "backend=cpu taps=256")).empty());
    auto output = [&](int i) {
        std::string name = "p";
        name += std::to_string(i);
        name += ".wav";
        return (s.dir / name).string();
    };
    std::vector<std::thread> threads;
    std::vector<std::string> results(4);
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
            results[static_cast<std::size_t>(i)] = runPipeline(pipelineFor(s, output(i), "backend=cpu taps=256"));
        });
    for (auto& t : threads)
        t.join();
    const io::AudioData a = io::readAudio(alone.string());
    for (int i = 0; i < 4; ++i) {
        INFO("pipeline " << i << ": " << results[static_cast<std::size_t>(i)]);
        REQUIRE(results[static_cast<std::size_t>(i)].empty());
        const io::AudioData p = io::readAudio(output(i));
        CHECK(p.channels[0] == a.channels[0]);
    }
    fs::remove_all(s.dir);
}

namespace {

// `count` live pipelines in this process, each two live pink-noise sources (48 kHz, 10 ms buffers) into
// quellaec and a clock-synchronised sink that drops what comes more than 1 ms after its time; after
// `warmUp` seconds (the shared engine's preparation, the calls joining), `seconds` more. Each pipeline's
// element description, the samples that reached its sink and the buffers the sink dropped in those
// `seconds`.
struct LiveRun {
    std::vector<std::string> descriptions;
    std::string timing;   // the shared engine's (the first pipeline's element), read before the pipelines stop
    unsigned long long batches = 0, missed = 0, behind = 0;   // the engine's batches, missed and behind blocks in those `seconds`
    std::vector<guint64> samples, dropped;
    std::vector<std::string> errors;
};

GstPadProbeReturn countSamples(GstPad*, GstPadProbeInfo* info, gpointer counter)
{
    if (GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info))
        static_cast<std::atomic<guint64>*>(counter)->fetch_add(gst_buffer_get_size(buffer) / sizeof(float));
    return GST_PAD_PROBE_OK;
}

std::pair<guint64, guint64> sinkStats(GstElement* sink)
{
    GstStructure* stats = nullptr;
    g_object_get(sink, "stats", &stats, nullptr);
    guint64 rendered = 0, dropped = 0;
    if (stats != nullptr) {
        gst_structure_get_uint64(stats, "rendered", &rendered);
        gst_structure_get_uint64(stats, "dropped", &dropped);
        gst_structure_free(stats);
    }
    return {rendered, dropped};
}

LiveRun runLivePipelines(int count, const std::string& properties, double warmUp, double seconds)
{
    LiveRun run;
    std::vector<GstElement*> pipelines;
    std::vector<std::atomic<guint64>> samples(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        const std::string source = "audiotestsrc is-live=true wave=pink-noise samplesperbuffer=480 ! audio/x-raw,format=F32LE,rate=48000,channels=1";
        const std::string launch = "quellaec name=aec " + properties + " ! fakesink name=out sync=true qos=true max-lateness=1000000 " + source
                                   + " ! aec.sink " + source + " ! aec.far";
        GError* error = nullptr;
        GstElement* p = gst_parse_launch(launch.c_str(), &error);
        if (error != nullptr) {
            run.errors.push_back(error->message);
            g_error_free(error);
        }
        if (p == nullptr)
            continue;
        GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "out");
        GstPad* pad = gst_element_get_static_pad(sink, "sink");
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, countSamples, &samples[pipelines.size()], nullptr);
        gst_object_unref(pad);
        gst_object_unref(sink);
        pipelines.push_back(p);
    }
    for (GstElement* p : pipelines)
        gst_element_set_state(p, GST_STATE_PLAYING);
    std::this_thread::sleep_for(std::chrono::duration<double>(warmUp));
    auto engineCounts = [&](GstElement* pipeline) {
        GstElement* aec = gst_bin_get_by_name(GST_BIN(pipeline), "aec");
        gchar* timing = nullptr;
        g_object_get(aec, "timing", &timing, nullptr);
        unsigned long long batches = 0, missed = 0, behind = 0;
        if (timing != nullptr)
            std::sscanf(timing, "%llu batches, %llu blocks missed, %llu behind", &batches, &missed, &behind);
        g_free(timing);
        gst_object_unref(aec);
        return std::tuple{batches, missed, behind};
    };
    const auto countsBefore = pipelines.empty() ? std::tuple<unsigned long long, unsigned long long, unsigned long long>{} : engineCounts(pipelines[0]);
    std::vector<std::pair<guint64, guint64>> before;
    for (std::size_t i = 0; i < pipelines.size(); ++i) {
        GstElement* sink = gst_bin_get_by_name(GST_BIN(pipelines[i]), "out");
        before.push_back({samples[i].load(), sinkStats(sink).second});
        gst_object_unref(sink);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    for (std::size_t i = 0; i < pipelines.size(); ++i) {
        GstElement* sink = gst_bin_get_by_name(GST_BIN(pipelines[i]), "out");
        const auto after = sinkStats(sink);
        gst_object_unref(sink);
        run.samples.push_back(samples[i].load() - before[i].first);
        run.dropped.push_back(after.second - before[i].second);
        GstElement* aec = gst_bin_get_by_name(GST_BIN(pipelines[i]), "aec");
        gchar* description = nullptr;
        g_object_get(aec, "description", &description, nullptr);
        run.descriptions.emplace_back(description ? description : "");
        g_free(description);
        if (i == 0) {
            gchar* timing = nullptr;
            g_object_get(aec, "timing", &timing, nullptr);
            run.timing = timing ? timing : "";
            g_free(timing);
        }
        gst_object_unref(aec);
        GstBus* bus = gst_element_get_bus(pipelines[i]);
        while (GstMessage* msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
            GError* err = nullptr;
            gst_message_parse_error(msg, &err, nullptr);
            run.errors.push_back(err->message);
            g_error_free(err);
            gst_message_unref(msg);
        }
        gst_object_unref(bus);
    }
    if (!pipelines.empty()) {
        const auto countsAfter = engineCounts(pipelines[0]);
        run.batches = std::get<0>(countsAfter) - std::get<0>(countsBefore);
        run.missed = std::get<1>(countsAfter) - std::get<1>(countsBefore);
        run.behind = std::get<2>(countsAfter) - std::get<2>(countsBefore);
    }
    for (GstElement* p : pipelines) {
        gst_element_set_state(p, GST_STATE_NULL);
        gst_object_unref(p);
    }
    return run;
}

// The calls' stream numbers ("call k of n") are all different: one engine took them all.
void checkOneEngine(const LiveRun& run, int count)
{
    std::vector<std::string> calls;
    for (const std::string& d : run.descriptions) {
        INFO(d);
        const auto at = d.find("shared: call ");
        REQUIRE(at != std::string::npos);
        calls.push_back(d.substr(at));
    }
    std::sort(calls.begin(), calls.end());
    CHECK(std::unique(calls.begin(), calls.end()) == calls.end());
    CHECK(run.descriptions.size() == static_cast<std::size_t>(count));
}

void checkRealTime(const LiveRun& run, double seconds)
{
    guint64 dropped = 0, least = ~guint64(0);
    for (std::size_t i = 0; i < run.samples.size(); ++i) {
        dropped += run.dropped[i];
        least = std::min(least, run.samples[i]);
    }
    std::string errors;
    for (const std::string& e : run.errors)
        errors += e + "; ";
    INFO(run.samples.size() << " pipelines for " << seconds << " s: the fewest samples out " << least << ", " << dropped
                            << " buffers dropped; errors: " << errors);
    std::printf("%zu live pipelines for %.0f s: the fewest samples out %llu (%.3f of the microphone's), %llu buffers dropped; in those "
                "seconds %llu batches, %llu blocks missed, %llu handed in behind; the engine since its start: %s\n",
                run.samples.size(), seconds, static_cast<unsigned long long>(least), static_cast<double>(least) / (seconds * 48000.0),
                static_cast<unsigned long long>(dropped), run.batches, run.missed, run.behind, run.timing.c_str());
    CHECK(run.errors.empty());
    CHECK(dropped == 0);
    // Every pipeline kept up with its 48 kHz microphone.
    CHECK(static_cast<double>(least) >= 0.95 * seconds * 48000.0);
}

} // namespace

TEST_CASE("quellaec: eight live pipelines in one process are calls of one engine, in real time on the CPU", "[gstreamer][live]")
{
    initGstreamer();
    const double seconds = 4.0;
    const LiveRun run = runLivePipelines(8, "backend=cpu taps=256", 1.5, seconds);
    checkOneEngine(run, 8);
    checkRealTime(run, seconds);
    INFO(run.timing);
    CHECK(run.timing.find(" batches, ") != std::string::npos);
}

TEST_CASE("quellaec: 64 live pipelines in one process are calls of one GPU engine, in real time", "[gstreamer][live][gpu]")
{
    initGstreamer();
    // Skips where the GPU cannot run a filter: the same question the element's backend=gpu asks.
    aec::EchoCancellerSettings probe;
    probe.backend = aec::Backend::Gpu;
    probe.taps = 512;
    probe.filter = aec::FilterKind::Rls;
    const aec::FilterPlanResult plan = aec::planLinearFilter(probe, {16000, 160, 1});
    if (!plan.ok()) {
        WARN("SKIPPED: no usable GPU (" << plan.whyNot << ")");
        return;
    }
    // The 64 calls, for 20 s; more with QUELL_GST_LIVE_PIPELINES and QUELL_GST_LIVE_SECONDS.
    const char* seconds_ = std::getenv("QUELL_GST_LIVE_SECONDS");
    const char* pipelines_ = std::getenv("QUELL_GST_LIVE_PIPELINES");
    const char* extra = std::getenv("QUELL_GST_LIVE_PROPERTIES");   // e.g. thread-priority=0
    const double seconds = seconds_ != nullptr ? std::atof(seconds_) : 20.0;
    const int pipelines = pipelines_ != nullptr ? std::atoi(pipelines_) : 64;
    for (const char* filter : {"rls", "kalman"}) {
        INFO(filter);
        const std::string properties = std::string("backend=gpu taps=512 calls=") + std::to_string(pipelines) + " filter=" + filter + " "
                                       + (extra != nullptr ? extra : "");
        const LiveRun run = runLivePipelines(pipelines, properties, 5.0, seconds);
        checkOneEngine(run, pipelines);
        checkRealTime(run, seconds);
        std::printf("quellaec, %d live pipelines, %s, %.0f s: %s\n", pipelines, properties.c_str(), seconds, run.descriptions.front().c_str());
    }
}
