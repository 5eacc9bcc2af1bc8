// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The many-streams canceller against lone cancellers, for the CPU test (Tests/cpu/MultiStreamCancellerTests.cpp)
// and the GPU's (Tests/gpu/GpuMultiStreamTests.cpp): three calls of the call-split scene (a path change at
// 1 s, a near end from 1.5 s) at different levels, the second joining 0.3 s after the others and the third
// leaving at 1.8 s, run in 10 ms blocks through one MultiStreamCanceller, and each alone through its own
// EchoCanceller with the same settings.
#include <catch2/catch.hpp>

#include <cstddef>
#include <vector>

#include "engine/MultiStreamCanceller.h"
#include "support/CancellerCallSplit.h"

namespace quell::test {

struct MultiStreamCase {
    static constexpr int kStreams = 4;
    static constexpr double kGain[kStreams] = {1.0, 0.3, 2.0, 0.7};
    // In 10 ms blocks: the fourth takes the third's place after it left (its slot, reset).
    static constexpr std::size_t kJoinBlock[kStreams] = {0, 30, 0, 100};
    static constexpr std::size_t kLeaveBlock[kStreams] = {200, 200, 90, 200};
    CallSplitScene scene = makeCallSplitScene();
    std::vector<float> mic[kStreams], far[kStreams];
    MultiStreamCase()
    {
        for (int s = 0; s < kStreams; ++s) {
            for (float x : scene.mic)
                mic[s].push_back(static_cast<float>(x * kGain[s]));
            for (float x : scene.far)
                far[s].push_back(static_cast<float>(x * kGain[s]));
        }
    }
};

// Each stream's output from its own first sample (blocks it did not run: none), the batched way: every
// stream's canceller with `canceller`, in a MultiStreamCanceller of `maxStreams` on two threads.
inline std::vector<std::vector<float>> runBatched(const aec::EchoCancellerSettings& canceller, int maxStreams, const MultiStreamCase& c,
                                                  std::string* description = nullptr)
{
    engine::MultiStreamSettings settings;
    settings.canceller = canceller;
    settings.maxStreams = maxStreams;
    settings.threads = 2;
    engine::MultiStreamCanceller batch;
    batch.prepare(settings);
    REQUIRE(batch.blockSamples() == 160);
    if (description)
        *description = batch.description();
    const int S = MultiStreamCase::kStreams;
    std::vector<std::vector<float>> out(S);
    int id[S] = {-1, -1, -1, -1}, slot[S] = {-1, -1, -1, -1};
    std::size_t done[S] = {};
    const std::size_t blocks = CallSplitScene::samples / 160;
    for (std::size_t k = 0; k < blocks; ++k) {
        std::vector<engine::MultiStreamCanceller::StreamBlock> list;
        for (int s = 0; s < S; ++s) {
            if (k == MultiStreamCase::kJoinBlock[s]) {
                id[s] = batch.open();
                REQUIRE(id[s] >= 0);
                slot[s] = id[s];
            }
            if (k == MultiStreamCase::kLeaveBlock[s] && id[s] >= 0) {
                batch.close(id[s]);
                id[s] = -1;
            }
            if (id[s] < 0)
                continue;
            const std::size_t at = done[s];
            out[s].resize(at + 160);
            engine::MultiStreamCanceller::StreamBlock b;
            b.stream = id[s];
            b.mic = c.mic[s].data() + at;
            b.ref[0] = c.far[s].data() + at;
            b.out = out[s].data() + at;
            list.push_back(b);
            done[s] += 160;
        }
        batch.process(list);
    }
    CHECK(slot[3] == slot[2]);   // the fourth ran in the third's place
    return out;
}

// The same stream alone, in 10 ms calls, as long as the batch ran it.
inline std::vector<float> runAlone(const aec::EchoCancellerSettings& settings, const MultiStreamCase& c, int s, std::size_t samples)
{
    aec::EchoCanceller canceller;
    canceller.prepare(settings, {16000, 160, 1});
    std::vector<float> out(samples);
    for (std::size_t at = 0; at < samples; at += 160)
        canceller.process(std::span(c.mic[s]).subspan(at, 160), std::span(c.far[s]).subspan(at, 160), std::span(out).subspan(at, 160));
    return out;
}

// Stream st's output took its echo 25 dB down or more over 0.375 to 0.875 s (before the path change).
inline void checkEchoReduced(const MultiStreamCase& c, int st, const std::vector<float>& out)
{
    const std::size_t from = 6000, to = 14000;
    REQUIRE(out.size() >= to);
    CHECK(reductionDb(std::span(c.mic[st]).subspan(from, to - from), std::span<const float>(out).subspan(from, to - from)) > 25.0);
}

} // namespace quell::test
