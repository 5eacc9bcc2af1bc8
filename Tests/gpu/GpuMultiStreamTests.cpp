// SPDX-License-Identifier: GPL-3.0-or-later
// The many-streams canceller on a GPU (engine/MultiStreamCanceller.h over the batched block-exact RLS):
// each stream's output against a lone canceller on the GPU with the same settings, as streams join and
// leave beside it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include "support/MultiStreamScene.h"

using namespace quell;

TEST_CASE("Many streams on a GPU: each stream's output is a lone GPU canceller's", "[gpu][multistream]")
{
    const test::MultiStreamCase c;
    aec::EchoCancellerSettings s;
    s.taps = 256;
    s.backend = aec::Backend::Gpu;
    s.distortionFilter = true;
    std::string description;
    const auto batched = test::runBatched(s, 5, c, &description);
    INFO(description);
    CHECK(description.find("GPU float32 block RLS batch (5 streams, 32 samples a pass)") != std::string::npos);
    for (int st = 0; st < test::MultiStreamCase::kStreams; ++st) {
        const auto alone = test::runAlone(s, c, st, batched[st].size());
        double worst = 0.0;
        std::size_t differing = 0;
        for (std::size_t i = 0; i < alone.size(); ++i) {
            worst = std::max(worst, std::abs(double(alone[i]) - batched[st][i]));
            differing += alone[i] != batched[st][i] ? 1 : 0;
        }
        const double rel = test::relativeL2(std::span<const float>(batched[st]), std::span<const float>(alone));
        INFO("stream " << st << ": " << differing << " of " << alone.size() << " samples differ, largest by " << worst
                       << ", relative L2 " << rel);
        std::printf("[multistream] stream %d: %zu of %zu samples differ from a lone GPU canceller's, largest by %.3g, relative L2 %.3g\n", st,
                    differing, alone.size(), worst, rel);
        CHECK(rel < 1e-5);
        test::checkEchoReduced(c, st, batched[st]);
    }
}

TEST_CASE("Many streams on a GPU with the Kalman filter: each stream is a lone CPU Kalman canceller's, up to rounding",
          "[gpu][multistream][kalman]")
{
    // The batch's Kalman filter runs on the GPU in blocks of 32 (they divide its 10 ms calls); a lone
    // canceller's runs on the CPU, asked for the same block. The filters agree to float rounding; the
    // cancellers' decisions around them (foreground copies, the path change at 1 s) then agree too.
    const test::MultiStreamCase c;
    aec::EchoCancellerSettings s;
    s.taps = 1024;
    s.filter = aec::FilterKind::Kalman;
    s.backend = aec::Backend::Gpu;
    std::string description;
    const auto batched = test::runBatched(s, 5, c, &description);
    INFO(description);
    CHECK(description.find("GPU float32 frequency-domain Kalman filter batch (5 streams), 1024 taps (32 partitions of 32)") != std::string::npos);
    aec::EchoCancellerSettings alone = s;
    alone.backend = aec::Backend::Cpu;
    alone.kalmanBlockSize = 32;
    for (int st = 0; st < test::MultiStreamCase::kStreams; ++st) {
        const auto lone = test::runAlone(alone, c, st, batched[st].size());
        const double rel = test::relativeL2(std::span<const float>(batched[st]), std::span<const float>(lone));
        std::printf("[multistream][kalman] stream %d: relative L2 against a lone CPU Kalman canceller %.3g\n", st, rel);
        INFO("stream " << st);
        CHECK(rel < 1e-3);
        test::checkEchoReduced(c, st, batched[st]);
    }
    // Backend Gpu with a far end the GPU batch cannot take (stereo) is refused by name; Auto takes the CPU's.
    engine::MultiStreamSettings stereo;
    stereo.canceller = s;
    stereo.farEndChannels = 2;
    stereo.maxStreams = 2;
    stereo.threads = 1;
    engine::MultiStreamCanceller refused;
    CHECK_THROWS_WITH(refused.prepare(stereo), Catch::Contains("one far-end channel"));
    stereo.canceller.backend = aec::Backend::Auto;
    engine::MultiStreamCanceller cpu;
    cpu.prepare(stereo);
    CHECK_FALSE(cpu.onGpu());
    CHECK(cpu.plan().fallbackReason.find("one far-end channel") != std::string::npos);
}
