// SPDX-License-Identifier: GPL-3.0-or-later
// quell-ports.lv2 as a control-port host uses it: dlopen the built module, take lv2_descriptor(0),
// instantiate at 48 kHz with a worker, connect the audio and control ports and run 10 ms blocks paced as
// a live host would: the echo reduction and the near end kept, the latency port against the bypass
// path's exact delay, a new filter length through the worker, and no allocation or lock in run().
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <lv2/core/lv2.h>
#include <lv2/worker/worker.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "support/FrontEndScene.h"
#include "support/RealtimeProbe.h"

namespace {

constexpr double kRate = 48000.0;
constexpr std::size_t kBlock = 480;
enum Port : uint32_t { Mic, FarEnd, Out, Taps, Suppression, Freeze, Bypass, Latency };

// The host's side of the worker extension: what the plugin scheduled, run when the test says.
struct Worker {
    std::vector<std::vector<unsigned char>> scheduled;
    static LV2_Worker_Status schedule(LV2_Worker_Schedule_Handle handle, uint32_t size, const void* data)
    {
        auto* w = static_cast<Worker*>(handle);
        const auto* bytes = static_cast<const unsigned char*>(data);
        w->scheduled.emplace_back(bytes, bytes + size);
        return LV2_WORKER_SUCCESS;
    }
    static LV2_Worker_Status respond(LV2_Worker_Respond_Handle, uint32_t, const void*) { return LV2_WORKER_SUCCESS; }
};

class LoadedPlugin {
public:
    explicit LoadedPlugin(double rate = kRate)
    {
        library_ = dlopen(QUELL_LV2_PORTS_PATH, RTLD_NOW | RTLD_LOCAL);
        REQUIRE(library_ != nullptr);
        auto entry = reinterpret_cast<LV2_Descriptor_Function>(dlsym(library_, "lv2_descriptor"));
        REQUIRE(entry != nullptr);
        descriptor_ = entry(0);
        REQUIRE(descriptor_ != nullptr);
        CHECK(std::strcmp(descriptor_->URI, "urn:quell:aec-ports") == 0);
        CHECK(entry(1) == nullptr);
        schedule_ = {&worker_, &Worker::schedule};
        feature_ = {LV2_WORKER__schedule, &schedule_};
        features_[0] = &feature_;
        handle_ = descriptor_->instantiate(descriptor_, rate, "", features_);
        if (!handle_)
            return;
        for (uint32_t p : {Taps, Suppression, Freeze, Bypass})
            descriptor_->connect_port(handle_, p, &controls_[p]);
        descriptor_->connect_port(handle_, Latency, &latency_);
        controls_[Suppression] = 40.0f;
        descriptor_->activate(handle_);
    }
    ~LoadedPlugin()
    {
        if (handle_) {
            descriptor_->deactivate(handle_);
            descriptor_->cleanup(handle_);
        }
        if (library_)
            dlclose(library_);
    }
    LoadedPlugin(const LoadedPlugin&) = delete;
    LoadedPlugin& operator=(const LoadedPlugin&) = delete;

    bool instantiated() const { return handle_ != nullptr; }
    float& control(Port p) { return controls_[p]; }
    float latency() const { return latency_; }
    Worker& worker() { return worker_; }
    const LV2_Worker_Interface* workerInterface() const
    {
        return static_cast<const LV2_Worker_Interface*>(descriptor_->extension_data(LV2_WORKER__interface));
    }
    LV2_Handle handle() const { return handle_; }

    // One block, as the host's audio thread runs it.
    void run(const float* mic, const float* far, float* out, uint32_t n)
    {
        descriptor_->connect_port(handle_, Mic, const_cast<float*>(mic));
        descriptor_->connect_port(handle_, FarEnd, const_cast<float*>(far));
        descriptor_->connect_port(handle_, Out, out);
        descriptor_->run(handle_, n);
    }

private:
    void* library_ = nullptr;
    const LV2_Descriptor* descriptor_ = nullptr;
    LV2_Handle handle_ = nullptr;
    Worker worker_;
    LV2_Worker_Schedule schedule_{};
    LV2_Feature feature_{};
    const LV2_Feature* features_[2] = {nullptr, nullptr};
    float controls_[8] = {};
    float latency_ = -1.0f;
};

// Runs `samples` of the room through the plugin in 10 ms blocks, paced as a live host calls it; counts
// allocations and locks inside run().
quell::test::RealtimeViolations runPaced(LoadedPlugin& plugin, const quell::test::FrontEndScene& room, std::vector<float>& out, std::size_t samples)
{
    const auto start = std::chrono::steady_clock::now();
    quell::test::resetRealtimeViolations();
    for (std::size_t pos = 0; pos + kBlock <= samples; pos += kBlock) {
        std::this_thread::sleep_until(start + std::chrono::microseconds(pos * 1000000 / static_cast<std::size_t>(kRate)));
        quell::test::RealtimeProbe probe;
        plugin.run(&room.mic[pos], &room.far[pos], &out[pos], kBlock);
    }
    return quell::test::realtimeViolations();
}

} // namespace

TEST_CASE("quell-ports.lv2 cancels a room's echo through its ports at 48 kHz, live", "[lv2]")
{
    LoadedPlugin plugin;
    REQUIRE(plugin.instantiated());
    const auto room = quell::test::frontEndScene(static_cast<std::size_t>(kRate), 51);
    std::vector<float> out(room.mic.size(), 0.0f);
    const auto violations = runPaced(plugin, room, out, room.mic.size());
    CHECK(violations.allocations == 0);
    CHECK(violations.locks == 0);
    CHECK(plugin.latency() > 0.0f);
    const double erle = room.erleDb(out);
    INFO("ERLE over 2-4 s: " << erle << " dB; latency " << plugin.latency() << " samples");
    CHECK(erle > 15.0);
    // Double talk: the output holds the near end, within 3 dB of it.
    const double kept = room.nearEndKeptDb(out);
    INFO("near end kept: " << kept << " dB");
    CHECK(std::abs(kept) < 3.0);
}

TEST_CASE("quell-ports.lv2 bypass plays the microphone delayed by exactly the latency it reports", "[lv2]")
{
    LoadedPlugin plugin;
    REQUIRE(plugin.instantiated());
    const auto room = quell::test::frontEndScene(static_cast<std::size_t>(kRate), 51);
    std::vector<float> out(room.mic.size(), 0.0f);
    plugin.control(Bypass) = 1.0f;
    plugin.control(Freeze) = 1.0f;
    plugin.control(Suppression) = 0.0f;
    const std::size_t samples = static_cast<std::size_t>(kRate);
    const auto violations = runPaced(plugin, room, out, samples);
    CHECK(violations.allocations == 0);
    const auto latency = static_cast<std::size_t>(plugin.latency());
    REQUIRE(latency > 0);
    REQUIRE(latency < samples / 2);
    // After the 10 ms crossfade from the (still silent) wet output, every sample is the microphone's.
    std::size_t wrong = 0, first = 0;
    for (std::size_t i = kBlock + latency; i < samples; ++i)
        if (out[i] != room.mic[i - latency] && wrong++ == 0)
            first = i;
    INFO("latency " << latency << "; first wrong sample " << first);
    CHECK(wrong == 0);
}

TEST_CASE("quell-ports.lv2 takes a new filter length through the host's worker", "[lv2]")
{
    LoadedPlugin plugin;
    REQUIRE(plugin.instantiated());
    const LV2_Worker_Interface* worker = plugin.workerInterface();
    REQUIRE(worker != nullptr);
    const auto room = quell::test::frontEndScene(static_cast<std::size_t>(kRate), 51);
    std::vector<float> out(room.mic.size(), 0.0f);
    plugin.control(Taps) = 512.0f;
    plugin.run(&room.mic[0], &room.far[0], &out[0], kBlock);
    REQUIRE(plugin.worker().scheduled.size() == 1);
    int taps = 0;
    REQUIRE(plugin.worker().scheduled[0].size() == sizeof taps);
    std::memcpy(&taps, plugin.worker().scheduled[0].data(), sizeof taps);
    CHECK(taps == 512);
    const auto& job = plugin.worker().scheduled[0];
    CHECK(worker->work(plugin.handle(), &Worker::respond, nullptr, static_cast<uint32_t>(job.size()), job.data()) == LV2_WORKER_SUCCESS);
    // The same length again schedules nothing; the canceller goes on with finite output.
    const auto violations = runPaced(plugin, room, out, static_cast<std::size_t>(kRate));
    CHECK(plugin.worker().scheduled.size() == 1);
    CHECK(violations.allocations == 0);
    CHECK(std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v) && std::abs(v) < 10.0f; }));
}

TEST_CASE("quell-ports.lv2 refuses a sample rate it cannot run", "[lv2]")
{
    LoadedPlugin plugin(1000.0);
    CHECK_FALSE(plugin.instantiated());
}
