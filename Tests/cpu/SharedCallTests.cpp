// SPDX-License-Identifier: GPL-3.0-or-later
// engine::SharedCall and SharedCallEngine on the CPU: calls on threads of their own in one engine, each the
// same samples as a lone RealtimeEngine offline (quell-render); a late call does not hold the others; the
// process's engines are shared by equal settings only, and a full one makes another.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "engine/SharedCall.h"
#include "support/OfflineRecordings.h"
#include "support/SharedCallScenes.h"

using namespace quell;

namespace {

engine::SharedCallSettings sharedSettings(const aec::EchoCancellerSettings& canceller, int maxStreams)
{
    engine::SharedCallSettings s;
    s.engine.canceller = canceller;
    s.engine.maxStreams = maxStreams;
    s.engine.threads = 2;
    s.engine.threadPriority = 0;
    return s;
}

aec::EchoCancellerSettings cpuCanceller(aec::FilterKind filter)
{
    aec::EchoCancellerSettings settings;
    settings.taps = 512;
    settings.backend = aec::Backend::Cpu;
    settings.filter = filter;
    settings.cpuThreads = 1;
    if (filter == aec::FilterKind::Kalman)
        settings.kalmanBlockSize = 32;   // the batch's block (MultiStreamCanceller.h)
    return settings;
}

// A recording through a joined call in host blocks of random sizes (1 to 1500 samples), then finish().
std::vector<float> runCall(engine::SharedCall& call, const test::OfflineRecording& r, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> size(1, 1500);
    const std::size_t frames = r.mic[0].size();
    std::vector<float> far(frames, 0.0f), out;
    std::copy(r.far.begin(), r.far.end(), far.begin());
    for (std::size_t pos = 0; pos < frames;) {
        const std::size_t n = std::min(size(rng), frames - pos);
        const std::span<const float> refs[1] = {std::span<const float>(far).subspan(pos, n)};
        call.process(std::span<const float>(r.mic[0]).subspan(pos, n), refs, out);
        REQUIRE(out.size() <= pos + n);
        pos += n;
    }
    call.finish(out);
    return out;
}

std::size_t firstDifference(const std::vector<float>& a, const std::vector<float>& b)
{
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        if (a[i] != b[i])
            return i;
    return std::min(a.size(), b.size());
}

} // namespace

TEST_CASE("Shared calls: four threads in one engine, each a lone offline engine's samples", "[engine][multistream][shared]")
{
    const test::OfflineRecording recordings[] = {test::makeOfflineRecording(48000, 1, 1.5, 11), test::makeOfflineRecording(16000, 1, 1.5, 12),
                                                 test::makeOfflineRecording(44100, 1, 1.0, 13), test::makeOfflineRecording(48000, 1, 1.2, 14)};
    for (const aec::FilterKind filter : {aec::FilterKind::Rls, aec::FilterKind::Kalman}) {
        const aec::EchoCancellerSettings canceller = cpuCanceller(filter);
        const engine::SharedCallSettings settings = sharedSettings(canceller, 4);
        engine::SharedCall calls[4];
        for (int k = 0; k < 4; ++k)
            calls[k].open(settings, recordings[k].rate);
        for (int k = 1; k < 4; ++k)
            CHECK(&calls[k].engine() == &calls[0].engine());
        const auto engine = calls[0].engineHandle();
        CHECK(engine->joined() == 4);
        std::vector<float> got[4];
        std::vector<std::thread> threads;
        for (int k = 0; k < 4; ++k)
            threads.emplace_back([&, k] {
                got[k] = runCall(calls[k], recordings[k], 100u + static_cast<std::uint32_t>(k));
                calls[k].close();   // the others' batches no longer wait for it
            });
        for (auto& t : threads)
            t.join();
        CHECK(engine->joined() == 0);
        const std::uint64_t batches = engine->batches();
        for (int k = 0; k < 4; ++k) {
            INFO(aec::toString(filter) << ", call " << k << " at " << recordings[k].rate << " Hz, delay " << calls[k].delaySamples());
            const auto alone = test::renderAlone(recordings[k], canceller);
            REQUIRE(got[k].size() == alone[0].size());
            CHECK(firstDifference(got[k], alone[0]) == alone[0].size());
            // The canceller did its work: the echo before the near end's burst is 15 dB down or more.
            const std::size_t n = got[k].size(), from = n / 4, to = n / 2;
            double mic = 0.0, out = 0.0;
            for (std::size_t i = from; i < to; ++i) {
                mic += double(recordings[k].mic[0][i]) * recordings[k].mic[0][i];
                out += double(got[k][i]) * got[k][i];
            }
            CHECK(10.0 * std::log10(mic / out) > 15.0);
        }
        // Blocks of 10 ms at 16 kHz: 150 for the longest call. Batches took several calls at once (each
        // alone would be 150 + 150 + 100 + 120 = 520): at most 260 here, 261 once on an H200 host's 16
        // cores, where the four threads' blocks meet the batches less evenly.
        INFO(batches << " batches");
        CHECK(batches >= 150);
        CHECK(batches <= 300);
    }
}

TEST_CASE("Shared calls: a late call holds the others back once, by the wait, and its own samples stay a lone engine's",
          "[engine][multistream][shared]")
{
    const test::OfflineRecording r = test::makeOfflineRecording(16000, 1, 1.0, 21);
    const aec::EchoCancellerSettings canceller = cpuCanceller(aec::FilterKind::Rls);
    engine::SharedCallSettings settings = sharedSettings(canceller, 3);
    settings.batchWait = std::chrono::milliseconds(200);
    engine::SharedCall busy, late, silent;
    busy.open(settings, 16000);
    late.open(settings, 16000);
    silent.open(settings, 16000);   // joined, and never hands in a block: never waited for
    REQUIRE(&busy.engine() == &late.engine());
    // The late call hands in half its recording (busy, joined but without a block yet, is not waited
    // for), then nothing while the other runs all of its own.
    const std::size_t half = r.mic[0].size() / 2;
    std::vector<float> lateOut;
    const std::span<const float> lateFar[1] = {std::span<const float>(r.far).first(half)};
    std::thread lateThread([&] { late.process(std::span<const float>(r.mic[0]).first(half), lateFar, lateOut); });
    lateThread.join();
    CHECK(busy.engine().missed() == 0);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<float> busyOut = runCall(busy, r, 7);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("100 blocks in " << seconds << " s, " << busy.engine().missed() << " blocks missed");
    // The first of busy's batches waited 200 ms for the late call; after that miss no batch did (held
    // back every time, 100 blocks would take 20 s).
    CHECK(busy.engine().missed() == 1);
    CHECK(seconds < 2.0);
    // The engine's view of the call that ran (MultiStreamCanceller's figures, tested there): its running
    // ERLE over the last second, which holds the near end's burst too (7.8 dB measured; the echo alone is
    // more than 15 dB down, the first test), and a filter that was never re-initialised.
    const std::optional<double> erle = busy.engine().erleDb(busy.stream());
    INFO("busy call's running ERLE " << erle.value_or(-1.0) << " dB");
    REQUIRE(erle.has_value());
    CHECK(*erle > 5.0);
    CHECK(busy.engine().health(busy.stream()).reinitialisations == 0);
    CHECK(!busy.engine().erleDb(silent.stream()).has_value());   // it never ran
    // On the CPU a call that missed batches held still: both are still the lone engine's samples.
    std::vector<float> rest(r.far.begin() + static_cast<std::ptrdiff_t>(half), r.far.end());
    rest.resize(r.mic[0].size() - half, 0.0f);
    const std::span<const float> restFar[1] = {rest};
    late.process(std::span<const float>(r.mic[0]).subspan(half), restFar, lateOut);
    late.finish(lateOut);
    const auto alone = test::renderAlone(r, canceller);
    CHECK(firstDifference(busyOut, alone[0]) == alone[0].size());
    REQUIRE(lateOut.size() == alone[0].size());
    CHECK(firstDifference(lateOut, alone[0]) == alone[0].size());
}

TEST_CASE("Shared calls on the CPU: a call that fell behind catches up at once while another runs in real time",
          "[engine][multistream][shared]")
{
    const test::OfflineRecording r = test::makeOfflineRecording(16000, 1, 1.0, 22);
    const aec::EchoCancellerSettings canceller = cpuCanceller(aec::FilterKind::Rls);
    engine::SharedCallSettings settings = sharedSettings(canceller, 2);
    engine::SharedCall paced, behind;
    paced.open(settings, 16000);
    behind.open(settings, 16000);
    const test::CatchUpRun run = test::runBehindBesidePaced(paced, behind, r);
    INFO("a second of audio handed in at once came out in " << run.seconds << " s");
    CHECK(run.seconds < 0.5);   // in lock step with the paced call: a second
    const auto alone = test::renderAlone(r, canceller);
    REQUIRE(run.out.size() == alone[0].size());
    CHECK(firstDifference(run.out, alone[0]) == alone[0].size());
}

TEST_CASE("Shared calls: equal settings share an engine, other settings and a full engine make another", "[engine][multistream][shared]")
{
    const aec::EchoCancellerSettings canceller = cpuCanceller(aec::FilterKind::Rls);
    engine::SharedCall a, b, c, d;
    a.open(sharedSettings(canceller, 2), 48000);
    b.open(sharedSettings(canceller, 2), 16000);
    CHECK(&a.engine() == &b.engine());
    c.open(sharedSettings(canceller, 2), 48000);   // the first is full
    CHECK(&c.engine() != &a.engine());
    aec::EchoCancellerSettings longer = canceller;
    longer.taps = 1024;
    d.open(sharedSettings(longer, 2), 48000);
    CHECK(&d.engine() != &c.engine());
    CHECK(c.engine().joined() == 1);
    b.close();
    engine::SharedCall e;
    e.open(sharedSettings(canceller, 2), 48000);   // b's stream, free again
    CHECK(&e.engine() == &a.engine());
    CHECK(a.engine().joined() == 2);

    // Delay and hold: the resamplers' and the canceller's delay, and a block more.
    CHECK(a.delaySamples() > b.delaySamples());
    CHECK(b.holdSamples() == b.delaySamples() + 161);

    engine::SharedCall bad;
    CHECK_THROWS_AS(bad.open(sharedSettings(canceller, 2), 4000), std::invalid_argument);
    std::vector<float> out;
    const std::vector<float> x(10, 0.0f);
    const std::span<const float> far[1] = {x};
    CHECK_THROWS_AS(bad.process(x, far, out), std::logic_error);
    const std::span<const float> two[2] = {x, x};
    CHECK_THROWS_AS(a.process(x, two, out), std::invalid_argument);
}
