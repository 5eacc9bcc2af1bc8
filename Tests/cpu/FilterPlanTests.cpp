// SPDX-License-Identifier: GPL-3.0-or-later
// The filter plan: every refusal is a reason, never an exception; every fallback says why; the plan's
// filter is the one it describes.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "aec/CpuFilterChoice.h"
#include "aec/EchoCanceller.h"
#include "aec/FilterPlan.h"

using namespace quell;
using aec::FilterEngine;
using Refusal = aec::FilterPlanResult::Refusal;

namespace {

const dsp::ProcessSpec kBlock160{.maximumBlockSize = 160};

aec::EchoCancellerSettings cpuOffline(int taps)
{
    aec::EchoCancellerSettings s;
    s.backend = aec::Backend::Cpu;
    s.taps = taps;
    return s;
}

} // namespace

TEST_CASE("the filter plan refuses bad settings with a reason instead of throwing", "[aec][plan]")
{
    struct Case {
        const char* what;
        aec::EchoCancellerSettings settings;
        dsp::ProcessSpec spec;
        const char* reason;
    };
    auto with = [](auto change) {
        aec::EchoCancellerSettings s = cpuOffline(1024);
        change(s);
        return s;
    };
    const Case cases[] = {
        {"rate", cpuOffline(1024), {.sampleRate = 7000, .maximumBlockSize = 160}, "7000"},
        {"short", with([](auto& s) { s.taps = aec::kMinTaps - 1; }), kBlock160, "taps per far-end channel"},
        {"long", with([](auto& s) { s.taps = aec::kMaxTaps + 1; }), kBlock160, "8193"},
        {"lambda", with([](auto& s) { s.lambda = 0.5; }), kBlock160, "lambda"},
        {"channels", cpuOffline(1024), {.maximumBlockSize = 160, .channels = 3}, "1 or 2 channels"},
        {"delay", with([](auto& s) { s.maxDelaySeconds = 5.0; }), kBlock160, "maxDelaySeconds"},
        {"block", cpuOffline(1024), {.maximumBlockSize = 0}, "samples per call"},
        {"kalman block", with([](auto& s) { s.filter = aec::FilterKind::Kalman; s.kalmanBlockSize = 96; }), kBlock160,
         "a power of two from 16 to 4096 (got 96)"},
        {"kalman on the gpu", with([](auto& s) { s.backend = aec::Backend::Gpu; s.filter = aec::FilterKind::Kalman; }),
         kBlock160, "Kalman filter runs on the CPU"},
        {"nlms on the gpu", with([](auto& s) { s.backend = aec::Backend::Gpu; s.filter = aec::FilterKind::Nlms; }),
         kBlock160, "NLMS runs on the CPU"},
        {"nlms with a stereo far end", with([](auto& s) { s.filter = aec::FilterKind::Nlms; }),
         {.maximumBlockSize = 160, .channels = 2}, "NLMS takes one far-end channel (got 2)"},
    };
    for (const Case& c : cases) {
        INFO(c.what);
        aec::FilterPlanResult r;
        REQUIRE_NOTHROW(r = aec::planLinearFilter(c.settings, c.spec));
        CHECK(r.refusal == Refusal::BadSettings);
        CHECK_THAT(r.whyNot, Catch::Contains(c.reason));
        aec::EchoCanceller canceller;
        CHECK_THROWS_AS(canceller.prepare(c.settings, c.spec), std::invalid_argument);
    }
}

TEST_CASE("the filter plan on the CPU: RLS at the length asked, the Kalman filter when asked or automatic", "[aec][plan]")
{
    SECTION("offline RLS at the length asked, with the automatic lambda")
    {
        const auto r = aec::planLinearFilter(cpuOffline(1000), kBlock160);
        REQUIRE(r.ok());
        CHECK(r.plan.engine == FilterEngine::CpuRls);
        CHECK(r.plan.tapsPerChannel() == 1000);
        CHECK(r.plan.channels() == 1);
        CHECK(r.plan.rls.lambda == Approx(1.0 - 1.0 / 10000.0));
        CHECK(r.plan.rls.delta == 0.01);        // automatic: 0.01 below 4096 taps in all
        CHECK(r.plan.fallbackReason.empty());   // the CPU was asked for
    }
    SECTION("the automatic delta: 0.03 from 4096 taps in all (one channel or two), as asked otherwise")
    {
        CHECK(aec::planLinearFilter(cpuOffline(4096), kBlock160).plan.rls.delta == 0.03);
        CHECK(aec::planLinearFilter(cpuOffline(4095), kBlock160).plan.rls.delta == 0.01);
        CHECK(aec::planLinearFilter(cpuOffline(2048), {.maximumBlockSize = 160, .channels = 2}).plan.rls.delta == 0.03);
        auto asked = cpuOffline(4096);
        asked.delta = 0.5;
        CHECK(aec::planLinearFilter(asked, kBlock160).plan.rls.delta == 0.5);
        asked.delta = -1.0;
        const auto refused = aec::planLinearFilter(asked, kBlock160);
        CHECK(!refused.ok());
        CHECK_THAT(refused.whyNot, Catch::Contains("delta must be 0 (automatic) or positive"));
    }
    SECTION("stereo: taps stay per channel, lambda follows the total")
    {
        const auto r = aec::planLinearFilter(cpuOffline(2000), {.maximumBlockSize = 160, .channels = 2});
        REQUIRE(r.ok());
        CHECK(r.plan.tapsPerChannel() == 2000);
        CHECK(r.plan.rls.totalTaps() == 4000);
        CHECK(r.plan.rls.tapsPerChannel == 2000);
        CHECK(r.plan.rls.totalTaps() == 4000);
        CHECK(r.plan.rls.channels == 2);
        CHECK(r.plan.kalmanSettings().taps == 2000);
        CHECK(r.plan.rls.lambda == Approx(1.0 - 1.0 / 40000.0));
    }
    SECTION("the Kalman filter when asked for")
    {
        aec::EchoCancellerSettings s = cpuOffline(4096);
        s.filter = aec::FilterKind::Kalman;
        const auto r = aec::planLinearFilter(s, kBlock160);
        REQUIRE(r.ok());
        CHECK(r.plan.engine == FilterEngine::CpuKalman);
    }
    SECTION("a stereo far end with the filter and length automatic: the two-channel fast RLS with the Kalman filter and the "
            "fast RLS on the channels' mean beside it; asked for, the Kalman filter alone")
    {
        const dsp::ProcessSpec stereoSpec{.maximumBlockSize = 160, .channels = 2};
        aec::EchoCancellerSettings s = cpuOffline(0);
        auto r = aec::planLinearFilter(s, stereoSpec);
        REQUIRE(r.ok());
        CHECK(r.plan.engine == FilterEngine::CpuRls);
        CHECK(r.plan.channels() == 2);
        CHECK(r.plan.rls.lambda == Approx(1.0 - 1.0 / 81920.0));   // 10 x the whole length, 2 x 4096 taps
        REQUIRE(r.plan.stereoMeanRls);
        CHECK(r.plan.stereoMeanRls->channels == 1);
        CHECK(r.plan.stereoMeanRls->tapsPerChannel == 4096);
        CHECK(r.plan.stereoMeanRls->lambda == Approx(1.0 - 1.0 / 40960.0));   // a mono filter's memory at 4096 taps
        REQUIRE(r.plan.stereoHalfRls);   // offline, the shorter two-channel fast RLS runs too
        CHECK(r.plan.stereoHalfRls->channels == 2);
        CHECK(r.plan.stereoHalfRls->tapsPerChannel == 2048);
        CHECK(r.plan.stereoHalfRls->lambda == Approx(1.0 - 1.0 / 40960.0));   // its own automatic memory: 10 x 2 x 2048
        CHECK_THAT(aec::makeLinearFilter(r.plan)->description(),
                   Catch::StartsWith("CPU float64 fast RLS, 2 far-end channels x 4096 taps")
                       && Catch::Contains("Kalman filter, 2 far-end channels x 4096 taps")
                       && Catch::Contains(", the CPU float64 fast RLS, 2 far-end channels x 2048 taps and the channels' mean through the CPU "
                                          "float64 fast RLS, 4096 taps"));
        s.filter = aec::FilterKind::Kalman;
        r = aec::planLinearFilter(s, stereoSpec);
        REQUIRE(r.ok());
        CHECK(r.plan.engine == FilterEngine::CpuKalman);
        CHECK_FALSE(r.plan.stereoMeanRls);
        CHECK_FALSE(r.plan.stereoHalfRls);
        CHECK(aec::planLinearFilter(cpuOffline(0), kBlock160).plan.stereoMeanRls == std::nullopt);   // mono
        CHECK(aec::planLinearFilter(cpuOffline(0), kBlock160).plan.stereoHalfRls == std::nullopt);

        // In real time all four run where they fit 80 % of the budget; else the three without the shorter
        // two-channel fast RLS; else the two-channel fast RLS alone;
        // else the Kalman filter with the mean's RLS; else the Kalman filter alone. The choice says which and
        // what it costs.
        s = cpuOffline(0);
        const auto planAt = [&](double budget) {
            s.cpuRealtimeBudget = budget;
            return aec::planLinearFilter(s, stereoSpec).plan;
        };
        aec::FilterPlan p = planAt(4.0);
        CHECK(p.engine == FilterEngine::CpuRls);   // about 0.45 of a core here
        CHECK(p.stereoMeanRls);
        CHECK(p.stereoHalfRls);
        CHECK_THAT(p.choice, Catch::Matches(R"( \([0-9.]+ of a core\).*)"));
        const double kalmanAndMean = (aec::measureKalmanSecondsPerSample(p.kalmanSettings())
                                      + aec::measureRlsSecondsPerSample(4096, 1)) * 16000.0;
        const double stereoRls = aec::measureRlsSecondsPerSample(4096, 2) * 16000.0;
        const double all = kalmanAndMean + stereoRls;
        const double withHalf = all + aec::measureRlsSecondsPerSample(2048, 2) * 16000.0;
        INFO("Kalman and mean " << kalmanAndMean << ", two-channel fast RLS " << stereoRls << ", all three " << all << ", with the shorter "
                                << withHalf << " of a core");
        // A budget between all three and all four: the three.
        p = planAt(std::sqrt(all * withHalf) / aec::kRealtimeHeadroom);
        CHECK(p.engine == FilterEngine::CpuRls);
        CHECK(p.stereoMeanRls);
        CHECK_FALSE(p.stereoHalfRls);
        CHECK_THAT(p.choice, Catch::Matches(R"( \([0-9.]+ of a core\).*)"));
        // A budget between the fast RLS alone and all three (0.25 and 0.35 here), by their geometric mean.
        p = planAt(std::sqrt(stereoRls * all) / aec::kRealtimeHeadroom);
        CHECK(p.engine == FilterEngine::CpuRls);
        CHECK_FALSE(p.stereoMeanRls);
        CHECK_FALSE(p.stereoHalfRls);
        CHECK_THAT(p.choice, Catch::StartsWith(" (alone, "));
        CHECK(aec::makeLinearFilter(p)->description() == "CPU float64 fast RLS, 2 far-end channels x 4096 taps");
        // Between the Kalman filter with the mean's RLS and the fast RLS alone (0.15 and 0.25 here), where
        // the machine orders them so.
        if (kalmanAndMean * 1.3 < stereoRls) {
            p = planAt(std::sqrt(kalmanAndMean * stereoRls) / aec::kRealtimeHeadroom);
            CHECK(p.engine == FilterEngine::CpuKalman);
            CHECK(p.stereoMeanRls);
            CHECK_THAT(p.choice, Catch::Contains("the Kalman filter and the mean's RLS"));
            CHECK_THAT(aec::makeLinearFilter(p)->description(), Catch::StartsWith("CPU float32 frequency-domain Kalman filter"));
        }
        p = planAt(0.001);
        CHECK(p.engine == FilterEngine::CpuKalman);
        CHECK_FALSE(p.stereoMeanRls);
        CHECK_THAT(p.choice, Catch::Contains("the Kalman filter alone: with the fast RLS on the channels' mean it would need"));
    }
    SECTION("NLMS when asked for, at the length asked or 1024 taps, offline and in real time (no timing)")
    {
        aec::EchoCancellerSettings s = cpuOffline(4096);
        s.filter = aec::FilterKind::Nlms;
        auto r = aec::planLinearFilter(s, kBlock160);
        REQUIRE(r.ok());
        CHECK(r.plan.engine == FilterEngine::CpuNlms);
        CHECK(r.plan.tapsPerChannel() == 4096);
        s.taps = 0;
        s.cpuRealtimeBudget = 0.5;
        r = aec::planLinearFilter(s, kBlock160);
        REQUIRE(r.ok());
        CHECK(r.plan.engine == FilterEngine::CpuNlms);
        CHECK(r.plan.tapsPerChannel() == 1024);
        CHECK(aec::makeLinearFilter(r.plan)->description() == "CPU float32 NLMS, 1024 taps");
    }
    SECTION("an automatic length in real time is the fast RLS at 256 ms, within half a core")
    {
        aec::EchoCancellerSettings s = cpuOffline(0);
        s.cpuRealtimeBudget = 0.5;
        const auto r = aec::planLinearFilter(s, kBlock160);
        REQUIRE(r.ok());
        CHECK(r.plan.engine == FilterEngine::CpuRls);
        CHECK(r.plan.tapsPerChannel() == 4096);
        CHECK_THAT(r.plan.choice, Catch::Contains("of a core") && Catch::Contains("256 ms"));
        CHECK(aec::makeLinearFilter(r.plan)->description() == "CPU float64 fast RLS, 4096 taps (2048 and 1024 beside it)");
    }
    SECTION("an automatic filter and length offline is the fast RLS at 256 ms too, and so is RLS asked for; "
            "the Kalman filter asked for is 256 ms")
    {
        // Each filter kind with the length automatic, offline: the engine, and 256 ms.
        const std::pair<aec::FilterKind, FilterEngine> kinds[] = {{aec::FilterKind::Auto, FilterEngine::CpuRls},
                                                                  {aec::FilterKind::Rls, FilterEngine::CpuRls},
                                                                  {aec::FilterKind::Kalman, FilterEngine::CpuKalman}};
        for (const auto& [kind, engine] : kinds) {
            INFO(aec::toString(kind));
            aec::EchoCancellerSettings s = cpuOffline(0);
            s.filter = kind;
            const auto k = aec::planLinearFilter(s, kBlock160);
            REQUIRE(k.ok());
            CHECK(k.plan.engine == engine);
            CHECK_THAT(k.plan.choice, Catch::Contains("256 ms"));
            CHECK(k.plan.tapsPerChannel() == 4096);
        }
    }
}

TEST_CASE("the filter plan's fallbacks: Auto takes the CPU with the reason, GPU is refused with it", "[aec][plan]")
{
    // Where this runs with a usable GPU the first case plans the GPU. A stereo far end of 4100 taps per
    // channel (8200 in all, past the GPU's 8192) falls back everywhere; one of 1021 falls back where the
    // GPU RLS cannot take it (no GPU here, or a kernel that wants a multiple of 4) and runs on the GPU
    // where it can: the plan follows gpuRlsWhyNot either way.
    aec::EchoCancellerSettings s;
    s.taps = 1024;
    const std::string gpuWhyNot = aec::gpuRlsWhyNot(aec::planLinearFilter(cpuOffline(1024), kBlock160).plan.rls, 160);
    {
        const auto r = aec::planLinearFilter(s, kBlock160);
        REQUIRE(r.ok());
        if (gpuWhyNot.empty()) {
            CHECK(r.plan.engine == FilterEngine::GpuRls);
        } else {
            CHECK(r.plan.engine == FilterEngine::CpuRls);
            CHECK(r.plan.fallbackReason == gpuWhyNot);
        }
    }
    for (const int taps : {4100, 1021}) {
        INFO("stereo, " << taps << " taps per channel");
        aec::EchoCancellerSettings stereo = s;
        stereo.taps = taps;
        const dsp::ProcessSpec stereoSpec{.maximumBlockSize = 160, .channels = 2};
        const std::string whyNot = aec::gpuRlsWhyNot(aec::planLinearFilter(cpuOffline(taps), stereoSpec).plan.rls, 160);
        if (taps == 4100)
            CHECK_FALSE(whyNot.empty());
        if (gpuWhyNot.empty() && taps == 4100)
            CHECK_THAT(whyNot, Catch::Contains("8192"));
        aec::FilterPlanResult r;
        REQUIRE_NOTHROW(r = aec::planLinearFilter(stereo, stereoSpec));
        REQUIRE(r.ok());
        if (whyNot.empty()) {
            CHECK(r.plan.engine == FilterEngine::GpuRls);
        } else {
            CHECK(r.plan.engine == FilterEngine::CpuRls);
            CHECK(r.plan.fallbackReason == whyNot);
        }

        stereo.backend = aec::Backend::Gpu;
        REQUIRE_NOTHROW(r = aec::planLinearFilter(stereo, stereoSpec));
        if (whyNot.empty()) {
            CHECK(r.ok());
            continue;
        }
        CHECK(r.refusal == Refusal::GpuUnavailable);
        CHECK_THAT(r.whyNot, Catch::Contains("--backend gpu"));
        aec::EchoCanceller canceller;
        CHECK_THROWS_AS(canceller.prepare(stereo, stereoSpec), aec::BackendUnavailable);
    }
}

TEST_CASE("the filter plan runs a stereo far end's automatic filter on the CPU at 256 ms", "[aec][plan][stereo]")
{
    const dsp::ProcessSpec stereo{.maximumBlockSize = 160, .channels = 2};
    for (const aec::Backend backend : {aec::Backend::Auto, aec::Backend::Cpu}) {
        INFO("backend " << aec::toString(backend));
        aec::EchoCancellerSettings s;
        s.backend = backend;   // filter and length automatic
        const auto r = aec::planLinearFilter(s, stereo);
        REQUIRE(r.ok());
        CHECK(r.plan.engine == FilterEngine::CpuRls);   // the two-channel fast RLS leading (CpuStereoFilter.cpp)
        CHECK(r.plan.stereoMeanRls);
        CHECK(r.plan.tapsPerChannel() == 4096);
        CHECK(r.plan.channels() == 2);
        CHECK(r.plan.choice == " (automatic: 256 ms for a stereo far end)");
        CHECK(r.plan.kalmanSettings().transitionGrowthBlocks == 0.0);   // the stereo Kalman filter keeps its A
    }
    // Asked for a length or a filter, or for the GPU, the plan does as asked.
    aec::EchoCancellerSettings taps = cpuOffline(512);
    CHECK(aec::planLinearFilter(taps, stereo).plan.engine == FilterEngine::CpuRls);
    aec::EchoCancellerSettings rls = cpuOffline(0);
    rls.filter = aec::FilterKind::Rls;
    const auto asked = aec::planLinearFilter(rls, stereo);
    CHECK(asked.plan.engine == FilterEngine::CpuRls);
    CHECK_FALSE(asked.plan.stereoMeanRls);
    // RLS asked for at an automatic length: 256 ms, as the two-channel fast RLS affords it (1024 taps
    // when it was the float32 O(N^2) one).
    CHECK(asked.plan.tapsPerChannel() == 4096);
    CHECK(aec::makeLinearFilter(asked.plan)->description() == "CPU float64 fast RLS, 2 far-end channels x 4096 taps");
    aec::EchoCancellerSettings gpu;
    gpu.backend = aec::Backend::Gpu;
    const auto g = aec::planLinearFilter(gpu, stereo);
    CHECK((g.ok() ? g.plan.engine == FilterEngine::GpuRls : g.refusal == Refusal::GpuUnavailable));
    // A mono far end's automatic filter is RLS (the fast RLS at 256 ms); its Kalman filter, asked for,
    // has a process noise that follows the schedule (a stereo pair's does not, above).
    const auto mono = aec::planLinearFilter(cpuOffline(0), kBlock160);
    CHECK(mono.plan.engine == FilterEngine::CpuRls);
    aec::EchoCancellerSettings kalman = cpuOffline(0);
    kalman.filter = aec::FilterKind::Kalman;
    CHECK(aec::planLinearFilter(kalman, kBlock160).plan.kalmanSettings().transitionGrowthBlocks == Approx(250.0));   // 2 s of its 128-sample blocks
    // A block asked for goes to the filter, and the schedule stays 2 s long in its blocks.
    kalman.kalmanBlockSize = 32;
    const dsp::PbfdkfSettings k32 = aec::planLinearFilter(kalman, kBlock160).plan.kalmanSettings();
    CHECK(k32.blockSize == 32);
    CHECK(k32.transitionGrowthBlocks == Approx(1000.0));
}

TEST_CASE("the filter a plan describes has the plan's length and channels", "[aec][plan]")
{
    aec::FilterPlan plan;
    plan.rls.tapsPerChannel = 96;
    plan.rls.lambda = 0.9999;
    plan.spec.maximumBlockSize = 160;
    for (const FilterEngine engine : {FilterEngine::CpuRls, FilterEngine::CpuKalman, FilterEngine::CpuNlms}) {
        for (const int channels : {1, 2}) {
            if (engine == FilterEngine::CpuNlms && channels == 2)
                continue;   // NLMS is one channel's
            INFO(aec::toString(engine) << ", " << channels << " channels");
            plan.engine = engine;
            plan.rls.channels = channels;
            const auto filter = aec::makeLinearFilter(plan);
            CHECK(filter->taps() == 96);
            CHECK(filter->channels() == channels);
            CHECK(filter->weights().size() == static_cast<std::size_t>(96 * channels));
            CHECK_FALSE(filter->onGpu());
        }
    }
}

TEST_CASE("the CPU's real-time choice: RLS where it fits (one channel's fast RLS at 256 ms does), else the Kalman filter, NLMS last", "[aec][plan][choice]")
{
    dsp::RlsSettings rls;
    rls.tapsPerChannel = 2048;
    dsp::PbfdkfSettings kalman;
    kalman.taps = 2048;
    // No budget is too large for RLS; none too small for NLMS on one channel; two channels never get NLMS.
    CHECK(aec::chooseRealtimeCpuFilter(rls, kalman, 16000, 1e9).engine == FilterEngine::CpuRls);
    const auto starved = aec::chooseRealtimeCpuFilter(rls, kalman, 16000, 1e-9);
    CHECK(starved.engine == FilterEngine::CpuNlms);
    CHECK_THAT(starved.why, Catch::Contains("would need"));
    dsp::RlsSettings stereoRls = rls;
    stereoRls.tapsPerChannel = 2048;
    stereoRls.channels = 2;
    dsp::PbfdkfSettings stereoKalman = kalman;
    stereoKalman.channels = 2;
    const auto stereo = aec::chooseRealtimeCpuFilter(stereoRls, stereoKalman, 16000, 1e-9);
    CHECK(stereo.engine == FilterEngine::CpuKalman);
    CHECK_THAT(stereo.why, Catch::Contains("over budget"));

    // One far-end channel's RLS is the fast RLS: 4096 taps fit half a core with the headroom.
    const double fastLoad = aec::measureRlsSecondsPerSample(4096, 1) * 16000;
    INFO("fast RLS at 4096 taps: " << fastLoad << " of a core");
    CHECK(fastLoad < 0.8 * 0.5);
    CHECK(aec::chooseRealtimeCpuFilter(rls, kalman, 16000, 0.5).engine == FilterEngine::CpuRls);

    // Two channels' RLS (the two-channel fast RLS, 2 x 2048 taps: about 0.1 of a core here) costs several
    // times their Kalman filter (0.01 to 0.02): between the two costs, the Kalman filter.
    const double rlsLoad = aec::measureRlsSecondsPerSample(2048, 2) * 16000;
    const double kalmanLoad = aec::measureKalmanSecondsPerSample(stereoKalman) * 16000;
    INFO("RLS " << rlsLoad << " of a core, Kalman " << kalmanLoad);
    REQUIRE(rlsLoad > 2.0 * kalmanLoad);
    const double between = std::sqrt(rlsLoad * kalmanLoad);
    const auto middle = aec::chooseRealtimeCpuFilter(stereoRls, stereoKalman, 16000, between);
    CHECK(middle.engine == FilterEngine::CpuKalman);
    CHECK_THAT(middle.why, Catch::Contains("of a core"));
}
