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
