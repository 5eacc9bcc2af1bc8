// SPDX-License-Identifier: GPL-3.0-or-later
// engine::OfflineCallBatch on a GPU (quell-render --batch --calls): recordings at 48 and 16 kHz through
// the GPU RLS batch against a lone GPU RealtimeEngine offline (what quell-render runs), and through the
// GPU Kalman batch against a lone CPU engine with the batch's block.
#include <catch2/catch.hpp>

#include <cstdio>
#include <vector>

#include "engine/OfflineCallBatch.h"
#include "support/OfflineRecordings.h"

using namespace quell;


TEST_CASE("Offline call batch on a GPU: each recording is a lone render's, up to the batch filter's rounding", "[gpu][multistream][offline]")
{
    const test::OfflineRecording recordings[] = {test::makeOfflineRecording(48000, 1, 2.0, 1), test::makeOfflineRecording(16000, 1, 1.5, 2)};
    for (const aec::FilterKind filter : {aec::FilterKind::Rls, aec::FilterKind::Kalman}) {
        aec::EchoCancellerSettings settings;
        settings.taps = 1024;
        settings.backend = aec::Backend::Gpu;
        settings.filter = filter;
        engine::MultiStreamSettings m;
        m.canceller = settings;
        m.maxStreams = 2;
        engine::OfflineCallBatch batch;
        batch.prepare(m);
        INFO(batch.engine().description());
        CHECK(batch.engine().onGpu());
        std::vector<std::vector<float>> got(2);
        for (int k = 0; k < 2; ++k)
            batch.add(recordings[k].mic, recordings[k].far, recordings[k].rate);
        while (!batch.idle())
            for (auto& f : batch.step())
                got[static_cast<std::size_t>(f.id)] = std::move(f.out[0]);
        // The lone reference: the GPU's RLS, or the CPU's Kalman filter with the batch's block.
        aec::EchoCancellerSettings alone = settings;
        if (filter == aec::FilterKind::Kalman) {
            alone.backend = aec::Backend::Cpu;
            alone.kalmanBlockSize = 32;
        }
        for (int k = 0; k < 2; ++k) {
            const std::vector<float> lone = test::renderAlone(recordings[k], alone)[0];
            REQUIRE(got[static_cast<std::size_t>(k)].size() == lone.size());
            const double rel = test::relativeL2(std::span<const float>(got[static_cast<std::size_t>(k)]), std::span<const float>(lone));
            const std::size_t n = lone.size();
            const double reduction = test::reductionDb(std::span<const float>(recordings[k].mic[0]).subspan(n / 4, n / 4),
                                                       std::span<const float>(got[static_cast<std::size_t>(k)]).subspan(n / 4, n / 4));
            std::printf("[offline] %s, %d Hz: relative L2 against a lone render %.3g, echo reduction before the near end %.1f dB\n",
                        aec::toString(filter), recordings[k].rate, rel, reduction);
            INFO(aec::toString(filter) << ", recording " << k);
            CHECK(rel < 1e-3);
            CHECK(reduction > 15.0);   // (the CPU test's bar: its least, the Kalman filter at 44.1 kHz, 18.9 dB)
        }
    }
}
