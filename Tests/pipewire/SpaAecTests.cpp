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

#include "support/FrontEndScene.h"
#include "support/RealtimeProbe.h"

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

} // namespace

TEST_CASE("libspa-aec-quell cancels a room's echo through the SPA interface at 48 kHz", "[pipewire]")
{
    LoadedAec aec({{"quell.offline", "true"}, {"quell.backend", "cpu"}, {"quell.taps", "512"}});
    REQUIRE(aec.init(1) == 0);
    // The block it asks the graph for (10 ms by default).
    REQUIRE(aec.aec().latency != nullptr);
    CHECK(std::string(aec.aec().latency) == "480/48000");
    const auto room = quell::test::frontEndScene(static_cast<std::size_t>(kRate), 41);
    std::vector<float> out(room.mic.size());
    for (std::size_t pos = 0; pos + kBlock <= room.mic.size(); pos += kBlock)
        REQUIRE(aec.run(&room.mic[pos], &room.far[pos], &out[pos], kBlock) == 0);
    const double erle = room.erleDb(out);
    INFO("ERLE over 2-4 s: " << erle << " dB");
    CHECK(erle > 20.0);
    // Double talk: the output holds the near end, within 3 dB of it (no cancelling of the talker).
    const double kept = room.nearEndKeptDb(out);
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
    const auto room = quell::test::frontEndScene(static_cast<std::size_t>(kRate), 41);
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
