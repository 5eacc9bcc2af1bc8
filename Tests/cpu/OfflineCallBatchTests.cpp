// SPDX-License-Identifier: GPL-3.0-or-later
// engine::OfflineCallBatch on the CPU: recordings at 48, 16 and 44.1 kHz, mono and stereo microphones,
// joining as others leave, each the same samples as a lone RealtimeEngine offline (what quell-render runs).
#include <catch2/catch.hpp>

#include <vector>

#include "engine/OfflineCallBatch.h"
#include "support/OfflineRecordings.h"

using namespace quell;


TEST_CASE("Offline call batch: each recording is a lone offline engine's output, joining as others leave", "[engine][multistream][offline]")
{
    const test::OfflineRecording recordings[] = {test::makeOfflineRecording(48000, 1, 2.0, 1), test::makeOfflineRecording(16000, 2, 1.5, 2),
                                                 test::makeOfflineRecording(44100, 1, 1.0, 3)};
    for (const aec::FilterKind filter : {aec::FilterKind::Rls, aec::FilterKind::Kalman}) {
        aec::EchoCancellerSettings settings;
        settings.taps = 1024;
        settings.backend = aec::Backend::Cpu;
        settings.filter = filter;
        settings.cpuThreads = 1;
        if (filter == aec::FilterKind::Kalman)
            settings.kalmanBlockSize = 32;   // the batch's block (MultiStreamCanceller.h)
        engine::MultiStreamSettings m;
        m.canceller = settings;
        m.maxStreams = 3;
        m.threads = 2;
        engine::OfflineCallBatch batch;
        batch.prepare(m);
        // The first two fill the three streams; the third joins when the first leaves.
        std::vector<std::vector<std::vector<float>>> got(3);
        std::vector<int> latency(3);
        int next = 0;
        std::size_t steps = 0;
        while (next < 3 || !batch.idle()) {
            while (next < 3 && static_cast<int>(recordings[next].mic.size()) <= batch.freeStreams()) {
                CHECK(batch.add(recordings[next].mic, recordings[next].far, recordings[next].rate) == next);
                ++next;
            }
            for (auto& f : batch.step()) {
                latency[static_cast<std::size_t>(f.id)] = f.latencySamples;
                got[static_cast<std::size_t>(f.id)] = std::move(f.out);
            }
            REQUIRE(++steps < 1000);
        }
        CHECK(batch.engine().openStreams() == 0);
        for (int k = 0; k < 3; ++k) {
            INFO(aec::toString(filter) << ", recording " << k << " at " << recordings[k].rate << " Hz, latency " << latency[static_cast<std::size_t>(k)]);
            const auto alone = test::renderAlone(recordings[k], settings);
            REQUIRE(got[static_cast<std::size_t>(k)].size() == alone.size());
            for (std::size_t c = 0; c < alone.size(); ++c) {
                std::size_t first = alone[c].size();
                for (std::size_t i = 0; i < alone[c].size(); ++i)
                    if (got[static_cast<std::size_t>(k)][c][i] != alone[c][i]) { first = i; break; }
                INFO("channel " << c << ": first differing sample " << first << " of " << alone[c].size());
                CHECK(first == alone[c].size());
                // The canceller did its work: the echo before the near end's burst is 15 dB down or more (the
                // Kalman filter at 44.1 kHz, the least: 18.9 dB).
                const std::size_t n = alone[c].size(), from = n / 4, len = n / 4;
                CHECK(test::reductionDb(std::span<const float>(recordings[k].mic[c]).subspan(from, len),
                                        std::span<const float>(alone[c]).subspan(from, len)) > 15.0);
            }
        }
    }
    engine::OfflineCallBatch full;
    engine::MultiStreamSettings one;
    one.canceller.backend = aec::Backend::Cpu;
    one.maxStreams = 1;
    one.threads = 1;
    full.prepare(one);
    CHECK_THROWS_WITH(full.add(recordings[1].mic, recordings[1].far, 16000), Catch::Contains("2 channels, 1 free streams"));
}
