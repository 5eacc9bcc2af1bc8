// SPDX-License-Identifier: GPL-3.0-or-later
// engine::SharedCall on a GPU (the quellaec element's calls): four calls on threads of their own in one
// engine, through the GPU RLS batch against a lone GPU RealtimeEngine offline (quell-render), and
// through the GPU Kalman batch against a lone CPU engine with the batch's block.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "engine/SharedCall.h"
#include "support/OfflineRecordings.h"

using namespace quell;

TEST_CASE("Shared calls on a GPU: four threads in one batch, each a lone render's up to the batch filter's rounding", "[gpu][multistream][shared]")
{
    const test::OfflineRecording recordings[] = {test::makeOfflineRecording(48000, 1, 2.0, 31), test::makeOfflineRecording(16000, 1, 1.5, 32),
                                                 test::makeOfflineRecording(44100, 1, 1.0, 33), test::makeOfflineRecording(48000, 1, 1.5, 34)};
    for (const aec::FilterKind filter : {aec::FilterKind::Rls, aec::FilterKind::Kalman}) {
        engine::SharedCallSettings settings;
        settings.engine.canceller.taps = 1024;
        settings.engine.canceller.backend = aec::Backend::Gpu;
        settings.engine.canceller.filter = filter;
        settings.engine.maxStreams = 4;
        // Long enough that no call misses a batch on a loaded host: the samples are then the lone ones.
        settings.batchWait = std::chrono::seconds(2);
        engine::SharedCall calls[4];
        for (int k = 0; k < 4; ++k)
            calls[k].open(settings, recordings[k].rate);
        const auto engine = calls[0].engineHandle();
        INFO(engine->description());
        REQUIRE(engine->onGpu());
        std::vector<float> got[4];
        std::vector<std::thread> threads;
        for (int k = 0; k < 4; ++k)
            threads.emplace_back([&, k] {
                const test::OfflineRecording& r = recordings[k];
                std::vector<float> far(r.mic[0].size(), 0.0f);
                std::copy(r.far.begin(), r.far.end(), far.begin());
                const std::size_t step = 441 + 97 * static_cast<std::size_t>(k);   // host blocks of odd sizes
                for (std::size_t pos = 0; pos < far.size(); pos += step) {
                    const std::size_t n = std::min(step, far.size() - pos);
                    const std::span<const float> refs[1] = {std::span<const float>(far).subspan(pos, n)};
                    calls[k].process(std::span<const float>(r.mic[0]).subspan(pos, n), refs, got[k]);
                }
                calls[k].finish(got[k]);
                calls[k].close();   // the others' batches no longer wait for it
            });
        for (auto& t : threads)
            t.join();
        const std::uint64_t batches = engine->batches();
        CHECK(engine->missed() == 0);
        aec::EchoCancellerSettings alone = settings.engine.canceller;
        if (filter == aec::FilterKind::Kalman) {
            alone.backend = aec::Backend::Cpu;
            alone.kalmanBlockSize = 32;
        }
        for (int k = 0; k < 4; ++k) {
            const std::vector<float> lone = test::renderAlone(recordings[k], alone)[0];
            REQUIRE(got[k].size() == lone.size());
            const double rel = test::relativeL2(std::span<const float>(got[k]), std::span<const float>(lone));
            const std::size_t n = lone.size();
            const double reduction = test::reductionDb(std::span<const float>(recordings[k].mic[0]).subspan(n / 4, n / 4),
                                                       std::span<const float>(got[k]).subspan(n / 4, n / 4));
            std::printf("[shared] %s, %d Hz: relative L2 against a lone render %.3g, echo reduction before the near end %.1f dB (%llu batches)\n",
                        aec::toString(filter), recordings[k].rate, rel, reduction, static_cast<unsigned long long>(batches));
            INFO(aec::toString(filter) << ", call " << k);
            CHECK(rel < 1e-3);
            CHECK(reduction > 15.0);
        }
        CHECK(batches <= 260);   // the calls went together (each alone: 200 + 150 + 100 + 150 = 600 batches)
    }
}
