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
#include "support/SharedCallScenes.h"

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
        // The calls went together (each alone: 200 + 150 + 100 + 150 = 600 batches). Host blocks of odd sizes
        // put a call a block behind now and then, which runs a catch-up batch: 203 on an H100 (284 for the RLS
        // and 301 for the Kalman filter while catch-up batches did not wait for a rest).
        CHECK(batches <= 320);
    }
}

namespace {

// GPU calls of 512 taps with the batch filter `filter`, and the lone render each call's samples are
// compared with: the RLS's is a lone GPU canceller's (the same bits), the Kalman filter's a lone CPU
// canceller's with the batch's block (float rounding).
struct GpuCalls {
    engine::SharedCallSettings settings;
    aec::EchoCancellerSettings alone;
};

GpuCalls gpuCalls(aec::FilterKind filter, int maxStreams)
{
    GpuCalls g;
    g.settings.engine.canceller.taps = 512;
    g.settings.engine.canceller.backend = aec::Backend::Gpu;
    g.settings.engine.canceller.filter = filter;
    g.settings.engine.maxStreams = maxStreams;
    g.settings.engine.threadPriority = 0;
    g.alone = g.settings.engine.canceller;
    if (filter == aec::FilterKind::Kalman) {
        g.alone.backend = aec::Backend::Cpu;
        g.alone.kalmanBlockSize = 32;
    }
    return g;
}

// The call's output against its lone render: the same bits for the RLS batch, relative L2 under 1e-3 for
// the Kalman batch.
void checkLone(aec::FilterKind filter, const std::vector<float>& got, const std::vector<float>& lone, const char* what)
{
    REQUIRE(got.size() == lone.size());
    const double rel = test::relativeL2(std::span<const float>(got), std::span<const float>(lone));
    std::size_t differing = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        differing += got[i] != lone[i] ? 1 : 0;
    std::printf("[shared] %s, %s: %zu of %zu samples differ from a lone render, relative L2 %.3g\n", aec::toString(filter), what, differing,
                got.size(), rel);
    INFO(aec::toString(filter) << ", " << what << ": " << differing << " samples differ, relative L2 " << rel);
    if (filter == aec::FilterKind::Rls)
        CHECK(differing == 0);
    else
        CHECK(rel < 1e-3);
}

} // namespace

TEST_CASE("Shared calls on a GPU: a late call's stream sits the batches out and keeps a lone render's samples", "[gpu][multistream][shared]")
{
    // The late call hands in half its recording, then nothing while the other runs all of its own (it
    // misses a hundred batches), then the rest: its stream of the batch filter held still meanwhile.
    const test::OfflineRecording r = test::makeOfflineRecording(16000, 1, 1.0, 41);
    for (const aec::FilterKind filter : {aec::FilterKind::Rls, aec::FilterKind::Kalman}) {
        GpuCalls g = gpuCalls(filter, 2);
        g.settings.batchWait = std::chrono::milliseconds(200);
        engine::SharedCall busy, late;
        busy.open(g.settings, 16000);
        late.open(g.settings, 16000);
        REQUIRE(&busy.engine() == &late.engine());
        REQUIRE(busy.engine().onGpu());
        const std::size_t half = r.mic[0].size() / 2;
        std::vector<float> lateOut, busyOut;
        const std::span<const float> lateFar[1] = {std::span<const float>(r.far).first(half)};
        late.process(std::span<const float>(r.mic[0]).first(half), lateFar, lateOut);
        std::vector<float> far(r.mic[0].size(), 0.0f);
        std::copy(r.far.begin(), r.far.end(), far.begin());
        const std::span<const float> busyFar[1] = {far};
        busy.process(r.mic[0], busyFar, busyOut);
        busy.finish(busyOut);
        const std::span<const float> restFar[1] = {std::span<const float>(far).subspan(half)};
        late.process(std::span<const float>(r.mic[0]).subspan(half), restFar, lateOut);
        late.finish(lateOut);
        INFO(busy.engine().timingText());
        CHECK(busy.engine().missed() >= 1);
        const std::vector<float> lone = test::renderAlone(r, g.alone)[0];
        checkLone(filter, busyOut, lone, "the call that ran");
        checkLone(filter, lateOut, lone, "the late call");
    }
}

TEST_CASE("Shared calls on a GPU: a call that fell behind catches up at once while another runs in real time", "[gpu][multistream][shared]")
{
    const test::OfflineRecording r = test::makeOfflineRecording(16000, 1, 1.0, 42);
    for (const aec::FilterKind filter : {aec::FilterKind::Rls, aec::FilterKind::Kalman}) {
        const GpuCalls g = gpuCalls(filter, 2);
        engine::SharedCall paced, behind;
        paced.open(g.settings, 16000);
        behind.open(g.settings, 16000);
        REQUIRE(paced.engine().onGpu());
        const test::CatchUpRun run = test::runBehindBesidePaced(paced, behind, r);
        std::printf("[shared] %s: a second of audio handed in at once came out in %.3f s (%s)\n", aec::toString(filter), run.seconds,
                    paced.engine().timingText().c_str());
        INFO(aec::toString(filter) << ": a second of audio handed in at once came out in " << run.seconds << " s");
        CHECK(run.seconds < 0.5);   // in lock step with the paced call: a second
        checkLone(filter, run.out, test::renderAlone(r, g.alone)[0], "the call that caught up");
    }
}
