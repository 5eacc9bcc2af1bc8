// SPDX-License-Identifier: GPL-3.0-or-later
// [gpu][plan] tests: on a device, "can this run on the GPU" has one answer (GpuRls::whyNot), the
// canceller's plan follows it, and what it refuses falls back to the CPU under Auto instead of
// escaping as an exception (issue 13: a stereo far end with 4100 taps per channel aborted; 4101 and
// 1021 fell back, the first past the cap, the second not a multiple of 4).
#include <catch2/catch.hpp>

#include <string>

#include "aec/EchoCanceller.h"
#include "aec/FilterPlan.h"
#include "rls/GpuRls.h"

using namespace quell;

TEST_CASE("GpuRls::whyNot is empty exactly where prepare runs, and says why elsewhere", "[gpu][plan]")
{
    struct Case {
        int taps, channels;
        const char* reason;   // empty: runs
    };
    const Case cases[] = {
        {1024, 1, ""}, {8192, 1, ""}, {2 * 4096, 2, ""}, {8196, 1, "8192"}, {2 * 4100, 2, "8192"},
        {2 * 4101, 2, "8192"}, {2 * 1024, 2, ""}, {2 * 1022, 2, "multiple of 4"}, {2 * 1021, 2, "multiple of 4"},
    };
    for (const Case& c : cases) {
        INFO(c.taps << " taps, " << c.channels << " far-end channels");
        dsp::RlsSettings s;
        s.tapsPerChannel = c.taps / c.channels;
        s.channels = c.channels;
        const std::string why = gpu::GpuRls::whyNot(s, 1, 160);
        gpu::GpuRls rls;
        if (std::string(c.reason).empty()) {
            CHECK(why.empty());
            CHECK_NOTHROW(rls.prepare(s, 1, 160));
        } else {
            CHECK_THAT(why, Catch::Contains(c.reason));
            CHECK_THROWS_AS(rls.prepare(s, 1, 160), std::invalid_argument);
        }
    }
}

TEST_CASE("the canceller on a GPU: stereo lengths the GPU cannot take fall back to the CPU under Auto", "[gpu][plan]")
{
    aec::EchoCancellerSettings s;
    const dsp::ProcessSpec stereo{.maximumBlockSize = 160, .channels = 2};
    s.cpuRealtimeBudget = 0.5;   // the CPU's real-time choice, so the fallback is cheap to prepare
    for (const int taps : {4096, 4100, 1021}) {
        INFO(taps << " taps per channel");
        s.taps = taps;
        s.backend = aec::Backend::Auto;
        aec::EchoCanceller canceller;
        REQUIRE_NOTHROW(canceller.prepare(s, stereo));
        // The canceller's block kernel takes any length per channel (the per-sample kernel wanted a
        // multiple of 4), up to 8192 taps in all.
        if (taps != 4100) {
            CHECK(canceller.onGpu());
            CHECK(canceller.fallbackReason().empty());
        } else {
            CHECK_FALSE(canceller.onGpu());
            CHECK_THAT(canceller.fallbackReason(), Catch::Contains("8192"));
            CHECK(canceller.plan().tapsPerChannel() == taps);
            s.backend = aec::Backend::Gpu;
            CHECK_THROWS_AS(canceller.prepare(s, stereo), aec::BackendUnavailable);
        }
    }
}
