// SPDX-License-Identifier: GPL-3.0-or-later
// The many-streams canceller (engine/MultiStreamCanceller.h) on the CPU: each stream's output is a lone
// canceller's, bit for bit, whatever joins and leaves beside it; the two halves of a canceller's block
// (beginBlock, finishBlock) are process(); the pool runs every item once.
#include <catch2/catch.hpp>

#include <atomic>
#include <numeric>
#include <stdexcept>

#include "engine/WorkerPool.h"
#include "support/MultiStreamScene.h"
#include "support/RealtimeProbe.h"

using namespace quell;

namespace {

aec::EchoCancellerSettings cpuSettings(aec::FilterKind filter)
{
    aec::EchoCancellerSettings s;
    s.taps = 256;
    s.backend = aec::Backend::Cpu;
    s.filter = filter;
    s.cpuThreads = 1;
    s.distortionFilter = true;   // every stage that runs around the filter
    return s;
}

// A prepared MultiStreamCanceller of the CPU's RLS at 256 taps.
void prepareCpuBatch(engine::MultiStreamCanceller& batch, int streams, int threads)
{
    engine::MultiStreamSettings m;
    m.canceller = cpuSettings(aec::FilterKind::Rls);
    m.maxStreams = streams;
    m.threads = threads;
    batch.prepare(m);
}

} // namespace

TEST_CASE("Many streams: each stream's output is a lone canceller's, bit for bit, as streams join and leave", "[engine][multistream]")
{
    const test::MultiStreamCase c;
    for (const aec::FilterKind filter : {aec::FilterKind::Rls, aec::FilterKind::Kalman}) {
        const aec::EchoCancellerSettings s = cpuSettings(filter);
        std::string description;
        const auto batched = test::runBatched(s, 4, c, &description);
        INFO(description);
        CHECK(description.find("one per stream") != std::string::npos);
        // The batch's Kalman filter takes a block that divides its 10 ms calls (32 here, where a lone
        // canceller's automatic one is 64); a lone canceller asked for the same block is its twin.
        aec::EchoCancellerSettings alone = s;
        if (filter == aec::FilterKind::Kalman) {
            CHECK(aec::kalmanBatchBlockSize(s.taps, 160) == 32);
            CHECK(description.find("partitions of 32") != std::string::npos);
            alone.kalmanBlockSize = 32;
        }
        for (int st = 0; st < test::MultiStreamCase::kStreams; ++st) {
            INFO("stream " << st);
            REQUIRE(batched[st].size() >= 14400);
            CHECK(batched[st] == test::runAlone(alone, c, st, batched[st].size()));
            test::checkEchoReduced(c, st, batched[st]);
        }
    }
}

TEST_CASE("Many streams: the Kalman filter asked for with backend auto runs where it can, and says why not", "[engine][multistream]")
{
    // Without a GPU (CI) the batch takes the CPU's filters and keeps the GPU's refusal; with one it is
    // the GPU batch (Tests/gpu/GpuMultiStreamTests.cpp compares it with lone CPU cancellers).
    engine::MultiStreamSettings m;
    m.canceller = cpuSettings(aec::FilterKind::Kalman);
    m.canceller.backend = aec::Backend::Auto;
    m.canceller.taps = 1024;
    m.maxStreams = 2;
    m.threads = 1;
    engine::MultiStreamCanceller batch;
    batch.prepare(m);
    INFO(batch.description());
    CHECK(batch.plan().kalmanBlockSize == 32);   // the largest block up to the automatic 64 that divides 160
    if (batch.onGpu()) {
        CHECK(batch.description().find("GPU float32 frequency-domain Kalman filter batch") != std::string::npos);
    } else {
        CHECK(batch.description().find("CPU float32 frequency-domain Kalman filter, 1024 taps (32 partitions of 32), one per stream")
              != std::string::npos);
        CHECK_FALSE(batch.plan().fallbackReason.empty());
    }
    CHECK(aec::kalmanBatchBlockSize(4096, 160) == 32);
    CHECK(aec::kalmanBatchBlockSize(4096, 441) == 0);   // 44.1 kHz: no power of two divides its 10 ms
    CHECK(aec::kalmanBatchBlockSize(4096, 512) == 128);
}

TEST_CASE("Many streams: what the caller may get wrong is refused by name", "[engine][multistream]")
{
    engine::MultiStreamSettings m;
    m.canceller = cpuSettings(aec::FilterKind::Rls);
    m.maxStreams = 2;
    m.threads = 1;
    engine::MultiStreamCanceller batch;
    CHECK_THROWS_WITH(batch.process({}), Catch::Contains("before prepare"));
    batch.prepare(m);
    const int a = batch.open(), b = batch.open();
    CHECK(a == 0);
    CHECK(b == 1);
    CHECK(batch.open() == -1);   // full
    CHECK(batch.openStreams() == 2);
    std::vector<float> x(160, 0.0f), y(160);
    engine::MultiStreamCanceller::StreamBlock block;
    block.stream = a;
    block.mic = x.data();
    block.ref[0] = x.data();
    block.out = y.data();
    const engine::MultiStreamCanceller::StreamBlock twice[2] = {block, block};
    CHECK_THROWS_WITH(batch.process(twice), Catch::Contains("given twice"));
    engine::MultiStreamCanceller::StreamBlock noFarEnd = block;
    noFarEnd.ref[0] = nullptr;
    CHECK_THROWS_WITH(batch.process({&noFarEnd, 1}), Catch::Contains("lacks its microphone, output or a far-end channel"));
    batch.process({&block, 1});   // the refusals left nothing half-done
    batch.close(b);
    CHECK_THROWS_WITH(batch.close(b), Catch::Contains("not open"));
    block.stream = b;
    CHECK_THROWS_WITH(batch.process({&block, 1}), Catch::Contains("not open"));
    CHECK(batch.open() == b);   // a closed stream is free again
    m.maxStreams = 0;
    CHECK_THROWS_WITH(batch.prepare(m), Catch::Contains("at least one stream"));

    // A block that crosses the canceller's segment end cannot run in halves around a batch.
    aec::EchoCanceller canceller;
    canceller.prepare(cpuSettings(aec::FilterKind::Rls), {16000, 700, 1});
    const std::vector<float> mic(200, 0.0f);
    std::vector<float> out(200);
    const std::span<const float> refs[1] = {mic};
    CHECK_THROWS_WITH(canceller.beginBlock(mic, refs, out), Catch::Contains("left in the segment"));
    const std::span<const float> refs100[1] = {std::span(mic).first(100)}, refs10[1] = {std::span(mic).first(10)};
    const auto call = canceller.beginBlock(refs100[0], refs100, std::span(out).first(100));
    CHECK(call.heard.size() == 100);
    CHECK_THROWS_WITH(canceller.beginBlock(refs10[0], refs10, std::span(out).first(10)),
                      Catch::Contains("not been finished"));
    canceller.finishBlock();
    CHECK_THROWS_WITH(canceller.finishBlock(), Catch::Contains("no block begun"));
    CHECK(canceller.samplesToSegmentEnd() == 60);
}

TEST_CASE("Worker pool: every item once, on several threads, and an item's exception comes back", "[engine][multistream]")
{
    for (int threads : {1, 2, 5}) {
        engine::WorkerPool pool(threads);
        CHECK(pool.threads() == threads);
        for (std::size_t count : {0u, 1u, 7u, 1000u}) {
            std::vector<std::atomic<int>> hits(count);
            for (int round = 0; round < 3; ++round)
                pool.run(count, [&](std::size_t i) { hits[i].fetch_add(1); });
            for (std::size_t i = 0; i < count; ++i)
                REQUIRE(hits[i].load() == 3);
        }
        std::atomic<int> ran{0};
        CHECK_THROWS_WITH(pool.run(50, [&](std::size_t i) {
            ran.fetch_add(1);
            if (i == 17)
                throw std::runtime_error("item 17 failed");
        }),
                          "item 17 failed");
        CHECK(ran.load() == 50);
        std::atomic<long> sum{0};
        pool.run(100, [&](std::size_t i) { sum.fetch_add(static_cast<long>(i)); });   // usable after a failure
        CHECK(sum.load() == 4950);
    }
}

TEST_CASE("Many streams: process() neither allocates nor locks once prepared (a pool of one: every item on this thread)",
          "[engine][multistream][realtime]")
{
    const test::MultiStreamCase c;
    engine::MultiStreamCanceller batch;
    prepareCpuBatch(batch, 3, 1);
    std::vector<engine::MultiStreamCanceller::StreamBlock> blocks(3);
    std::vector<float> out(3 * 160);
    for (int s = 0; s < 3; ++s)
        blocks[static_cast<std::size_t>(s)].stream = batch.open();
    auto run = [&](std::size_t k) {
        for (int s = 0; s < 3; ++s) {
            auto& b = blocks[static_cast<std::size_t>(s)];
            b.mic = c.mic[s].data() + k * 160;
            b.ref[0] = c.far[s].data() + k * 160;
            b.out = out.data() + static_cast<std::size_t>(s) * 160;
        }
        batch.process(blocks);
    };
    for (std::size_t k = 0; k < 50; ++k)
        run(k);
    test::resetRealtimeViolations();
    {
        test::RealtimeProbe probe;
        for (std::size_t k = 50; k < 150; ++k)
            run(k);
    }
    const test::RealtimeViolations v = test::realtimeViolations();
    CHECK(v.allocations == 0);
    CHECK(v.locks == 0);
}

TEST_CASE("Many streams: each stream's running ERLE, controls and health", "[engine][multistream]")
{
    // 3 s of a white far end through a 200-tap room, noise at -80 dB.
    constexpr std::size_t samples = 48000;
    const auto x = test::whiteNoise(samples, 31, 0.1), h = test::randomSystem(200, 32, 0.97), noise = test::whiteNoise(samples, 33, 1e-4);
    const auto y = test::convolve(std::span<const double>(x), std::span<const double>(h));
    std::vector<float> far(samples), mic(samples);
    for (std::size_t i = 0; i < samples; ++i) {
        far[i] = static_cast<float>(x[i]);
        mic[i] = static_cast<float>(y[i] + noise[i]);
    }
    engine::MultiStreamCanceller batch;
    prepareCpuBatch(batch, 2, 2);
    const int echo = batch.open(), quiet = batch.open();
    const std::vector<float> silence(samples, 0.0f);
    std::vector<float> out(2 * 160);
    double lastMic = 0.0, lastOut = 0.0;   // the last second's, for the expected figure
    CHECK_FALSE(batch.erleDb(echo).has_value());
    // The second stream's far end is silent (its microphone the first one's, as a near end).
    for (std::size_t k = 0; k < samples / 160; ++k) {
        engine::MultiStreamCanceller::StreamBlock b[2];
        b[0].stream = echo;
        b[0].mic = mic.data() + k * 160;
        b[0].ref[0] = far.data() + k * 160;
        b[0].out = out.data();
        b[1].stream = quiet;
        b[1].mic = mic.data() + k * 160;
        b[1].ref[0] = silence.data() + k * 160;
        b[1].out = out.data() + 160;
        batch.process(b);
        if (k >= samples / 160 - 100)
            for (std::size_t i = 0; i < 160; ++i) {
                lastMic += double(mic[k * 160 + i]) * mic[k * 160 + i];
                lastOut += double(out[i]) * out[i];
            }
    }
    const std::optional<double> erle = batch.erleDb(echo);
    REQUIRE(erle.has_value());
    const double expected = 10.0 * std::log10(lastMic / lastOut);
    INFO("ERLE over the last second " << *erle << " dB, the blocks' own " << expected);
    CHECK(*erle == Approx(expected).margin(1e-9));
    CHECK(*erle > 40.0);
    CHECK_FALSE(batch.erleDb(quiet).has_value());   // no far end: nothing to measure
    CHECK(batch.health(echo).reinitialisations == 0);
    aec::CancellerControls controls = batch.canceller(echo).controls();
    controls.suppressionDb = 0.0;
    batch.setControls(echo, controls);
    CHECK(batch.canceller(echo).controls().suppressionDb == 0.0);
    batch.close(echo);
    CHECK_THROWS_WITH(batch.setControls(echo, controls), Catch::Contains("not open"));
    CHECK(batch.open() == echo);   // reopened: a new call's defaults and no ERLE yet
    CHECK(batch.canceller(echo).controls().suppressionDb == cpuSettings(aec::FilterKind::Rls).suppressor.maxAttenuationDb);
    CHECK_FALSE(batch.erleDb(echo).has_value());
}
