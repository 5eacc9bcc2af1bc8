// SPDX-License-Identifier: GPL-3.0-or-later
// libspa-aec-quell as PipeWire's echo-cancel module uses it: dlopen the built plugin, find the SPA_NAME_AEC
// factory through spa_handle_factory_enum, make a handle, take its spa_audio_aec interface, init it at
// 48 kHz and cancel a simulated room's echo through run() in 10 ms blocks: the echo reduction, the near
// end kept, the latency it reports, its refusal of bad arguments, and a real-time (worker) run.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <spa/interfaces/audio/aec.h>
#include <spa/support/plugin.h>
#include <spa/utils/dict.h>
#include <spa/utils/names.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/RealtimeProbe.h"
#include "support/Signals.h"

namespace {

constexpr int kRate = 48000;
constexpr int kBlock = 480;

// One loaded plugin and one handle of its AEC factory.
class LoadedAec {
public:
    explicit LoadedAec(std::initializer_list<spa_dict_item> args)
    {
        library_ = dlopen(QUELL_SPA_AEC_PATH, RTLD_NOW | RTLD_LOCAL);
        REQUIRE(library_ != nullptr);
        auto enumerate = reinterpret_cast<spa_handle_factory_enum_func_t>(dlsym(library_, SPA_HANDLE_FACTORY_ENUM_FUNC_NAME));
        REQUIRE(enumerate != nullptr);
        const spa_handle_factory* factory = nullptr;
        uint32_t index = 0;
        while (enumerate(&factory, &index) > 0)
            if (std::strcmp(factory->name, SPA_NAME_AEC) == 0)
                break;
        REQUIRE(factory != nullptr);
        REQUIRE(std::strcmp(factory->name, SPA_NAME_AEC) == 0);
        storage_.resize(factory->get_size(factory, nullptr));
        handle_ = reinterpret_cast<spa_handle*>(storage_.data());
        REQUIRE(factory->init(factory, handle_, nullptr, nullptr, 0) == 0);
        void* iface = nullptr;
        REQUIRE(handle_->get_interface(handle_, SPA_TYPE_INTERFACE_AUDIO_AEC, &iface) == 0);
        aec_ = static_cast<spa_audio_aec*>(iface);
        args_ = args;
        dict_ = SPA_DICT_INIT(args_.data(), static_cast<uint32_t>(args_.size()));
    }
    ~LoadedAec()
    {
        if (handle_)
            handle_->clear(handle_);
        if (library_)
            dlclose(library_);
    }
    LoadedAec(const LoadedAec&) = delete;
    LoadedAec& operator=(const LoadedAec&) = delete;

    const spa_audio_aec_methods& methods() const { return *static_cast<const spa_audio_aec_methods*>(aec_->iface.cb.funcs); }
    int init(uint32_t channels)
    {
        spa_audio_info_raw info{};
        info.format = SPA_AUDIO_FORMAT_F32P;
        info.rate = kRate;
        info.channels = channels;
        return methods().init(aec_->iface.cb.data, &dict_, &info);
    }
    int run(const float* rec, const float* play, float* out, uint32_t n)
    {
        const float* r[1] = {rec};
        const float* p[1] = {play};
        float* o[1] = {out};
        return methods().run(aec_->iface.cb.data, r, p, o, n);
    }
    const spa_audio_aec& aec() const { return *aec_; }

private:
    void* library_ = nullptr;
    std::vector<unsigned char> storage_;
    spa_handle* handle_ = nullptr;
    spa_audio_aec* aec_ = nullptr;
    std::vector<spa_dict_item> args_;
    spa_dict dict_{};
};

struct Room {
    std::vector<float> far, echo, near, mic;
};

// 6 s at 48 kHz: speech-like far end through a random room; a near-end talker (its own noise) in the
// last 2 s only, at the echo's level.
Room simulatedRoom()
{
    const std::size_t n = 6 * kRate;
    const auto x = quell::test::colouredNoise(n, 41, 0.1);
    const auto h = quell::test::randomSystem(1500, 42, 300.0);
    const auto y = quell::test::convolve(std::span<const double>(x), std::span<const double>(h));
    const auto v = quell::test::colouredNoise(n, 43, 0.1);
    Room r;
    r.far.assign(x.begin(), x.end());
    r.echo.resize(n);
    r.near.assign(n, 0.0f);
    r.mic.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        r.echo[i] = static_cast<float>(0.5 * y[i]);
        if (i >= 4 * static_cast<std::size_t>(kRate))
            r.near[i] = static_cast<float>(0.5 * v[i]);
        r.mic[i] = r.echo[i] + r.near[i];
    }
    return r;
}

double energy(const std::vector<float>& v, std::size_t from, std::size_t to)
{
    double e = 0.0;
    for (std::size_t i = from; i < to; ++i)
        e += double(v[i]) * v[i];
    return e;
}

} // namespace

TEST_CASE("libspa-aec-quell cancels a room's echo through the SPA interface at 48 kHz", "[pipewire]")
{
    LoadedAec aec({{"quell.offline", "true"}, {"quell.backend", "cpu"}, {"quell.taps", "512"}});
    REQUIRE(aec.init(1) == 0);
    // The block it asks the graph for (10 ms by default).
    REQUIRE(aec.aec().latency != nullptr);
    CHECK(std::string(aec.aec().latency) == "480/48000");
    const Room room = simulatedRoom();
    std::vector<float> out(room.mic.size());
    for (std::size_t pos = 0; pos + kBlock <= room.mic.size(); pos += kBlock)
        REQUIRE(aec.run(&room.mic[pos], &room.far[pos], &out[pos], kBlock) == 0);
    // Far-end single talk after convergence (2-4 s): the output against the microphone. The output is
    // late by the engine's latency (tens of ms): over two seconds of steady speech-like noise that moves
    // the energies by a fraction of a dB.
    const double erle = 10.0 * std::log10(energy(room.mic, 2 * kRate, 4 * kRate) / energy(out, 2 * kRate, 4 * kRate));
    INFO("ERLE over 2-4 s: " << erle << " dB");
    CHECK(erle > 20.0);
    // Double talk (4-6 s): the output holds the near end, within 3 dB of it (no cancelling of the talker).
    const double kept = 10.0 * std::log10(energy(out, 4 * kRate + kRate / 2, 6 * kRate) / energy(room.near, 4 * kRate + kRate / 2, 6 * kRate));
    INFO("near end kept: " << kept << " dB");
    CHECK(std::abs(kept) < 3.0);
}

TEST_CASE("libspa-aec-quell refuses what it cannot run, and runs real time on its worker", "[pipewire]")
{
    {
        LoadedAec bad({{"quell.taps", "lots"}});
        CHECK(bad.init(1) == -EINVAL);
    }
    {
        LoadedAec three({});
        CHECK(three.init(3) == -EINVAL);
    }
    LoadedAec live({{"quell.backend", "cpu"}, {"quell.taps", "256"}});
    REQUIRE(live.init(1) == 0);
    const Room room = simulatedRoom();
    std::vector<float> out(2 * kRate, 1e9f);
    // Two seconds paced as the graph would call it: every output sample written and finite, and no
    // allocation or lock in run() (the graph's real-time thread).
    const auto start = std::chrono::steady_clock::now();
    quell::test::resetRealtimeViolations();
    int failed = 0;
    for (std::size_t pos = 0; pos + kBlock <= out.size(); pos += kBlock) {
        std::this_thread::sleep_until(start + std::chrono::microseconds(pos * 1000000 / kRate));
        quell::test::RealtimeProbe probe;
        failed += live.run(&room.mic[pos], &room.far[pos], &out[pos], kBlock) != 0;
    }
    const auto violations = quell::test::realtimeViolations();
    CHECK(failed == 0);
    CHECK(violations.allocations == 0);
    CHECK(violations.locks == 0);
    CHECK(std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v) && std::abs(v) < 10.0f; }));
}
