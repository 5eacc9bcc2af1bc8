// SPDX-License-Identifier: GPL-3.0-or-later
// [gpu][block-rls] tests: the block-exact GPU RLS against the float64 per-sample CPU RLS and against its
// CPU twin (dsp::BlockRls<float>), over N, k, call splits, a stereo far end and the safeguards.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dsp/BlockRls.h"
#include "dsp/Rls.h"
#include "rls/GpuBlockRls.h"
#include "support/EnduranceCase.h"
#include "support/Signals.h"

using quell::dsp::BlockRls;
using quell::dsp::Rls;
using quell::dsp::RlsSettings;
using quell::gpu::GpuBlockRls;

namespace {

struct Echo {
    std::vector<float> x, d; // x: channels interleaved
    std::vector<double> h;
};

// AR(1) (pole 0.9) or white far end through a decaying random path per channel, plus noise at -80 dB.
Echo makeEcho(std::size_t samples, int tapsPerChannel, std::uint32_t seed, bool coloured, int channels = 1)
{
    Echo c;
    std::vector<double> d(samples, 0.0);
    c.x.assign(samples * static_cast<std::size_t>(channels), 0.0f);
    for (int ch = 0; ch < channels; ++ch) {
        const auto s = seed + 10u * static_cast<std::uint32_t>(ch);
        const auto x = coloured ? quell::test::colouredNoise(samples, s) : quell::test::whiteNoise(samples, s, 0.1);
        const auto h = quell::test::randomSystem(static_cast<std::size_t>(tapsPerChannel), s + 1, tapsPerChannel / 6.0);
        const auto y = quell::test::convolve(x, h);
        for (std::size_t i = 0; i < samples; ++i) {
            c.x[i * static_cast<std::size_t>(channels) + static_cast<std::size_t>(ch)] = static_cast<float>(x[i]);
            d[i] += y[i];
        }
        c.h.insert(c.h.end(), h.begin(), h.end());
    }
    const auto noise = quell::test::whiteNoise(samples, seed + 2, 1e-4);
    for (std::size_t i = 0; i < samples; ++i)
        d[i] += noise[i];
    c.d = quell::test::cast<float>(std::span<const double>(d));
    return c;
}

RlsSettings settingsFor(int tapsPerChannel, int channels = 1)
{
    RlsSettings s;
    s.tapsPerChannel = tapsPerChannel;
    s.channels = channels;
    return s;
}

// A batch of lone.size() streams at `pitch` with its weights mirrored, and a lone filter per stream in
// calls of `call`, k samples a pass.
void prepareBatchAndLone(GpuBlockRls& batch, std::vector<GpuBlockRls>& lone, const RlsSettings& s, std::size_t pitch, std::size_t call,
                         int k = 32)
{
    batch.prepare(s, k, pitch, static_cast<int>(lone.size()));
    batch.mirrorWeights();
    for (auto& f : lone)
        f.prepare(s, k, call);
}

std::vector<double> perSampleReference(const RlsSettings& s, const Echo& c)
{
    Rls<double> rls;
    rls.prepare(s);
    std::vector<double> d(c.d.begin(), c.d.end()), x(c.x.begin(), c.x.end()), e(c.d.size());
    if (s.channels == 1)
        rls.process(d, x, e);
    else
        rls.processInterleaved(d, x, e);
    return e;
}

// The GPU filter over the case in calls of the given lengths (cycled).
std::vector<float> runGpu(GpuBlockRls& gpu, const Echo& c, const std::vector<std::size_t>& calls)
{
    const std::size_t channels = c.x.size() / c.d.size();
    std::vector<float> e(c.d.size(), std::numeric_limits<float>::quiet_NaN());
    std::size_t pos = 0, k = 0;
    while (pos < c.d.size()) {
        const std::size_t n = std::min(c.d.size() - pos, calls[k++ % calls.size()]);
        gpu.process(c.d.data() + pos, c.x.data() + pos * channels, e.data() + pos, n);
        pos += n;
    }
    return e;
}

std::vector<float> runTwin(const RlsSettings& s, int k, const Echo& c)
{
    BlockRls<float> twin;
    twin.prepare(s, k);
    std::vector<float> e(c.d.size());
    if (s.channels == 1)
        twin.process(c.d, c.x, e);
    else
        twin.processInterleaved(c.d, c.x, e);
    return e;
}

// Samples [from, from + n) of each of `streams` planar signals of `length` samples (`width` values a
// sample: the far-end channels), planar: a batch call's buffer.
std::vector<float> sliceStreams(const std::vector<float>& all, std::size_t streams, std::size_t length, std::size_t width,
                                std::size_t from, std::size_t n)
{
    std::vector<float> slice(streams * n * width);
    for (std::size_t i = 0; i < streams; ++i)
        std::copy_n(all.begin() + static_cast<std::ptrdiff_t>((i * length + from) * width), n * width,
                    slice.begin() + static_cast<std::ptrdiff_t>(i * n * width));
    return slice;
}

// `streams` streams of `samples` samples (mic planar; ref planar with `width` far-end values a sample)
// through a batch in calls of 1000 then 37 samples, cycled: each stream's output, stream after stream.
std::vector<float> runBatchInCalls(GpuBlockRls& batch, const std::vector<float>& mic, const std::vector<float>& ref, std::size_t streams,
                                   std::size_t samples, std::size_t width)
{
    std::vector<float> out(streams * samples, std::numeric_limits<float>::quiet_NaN());
    for (std::size_t pos = 0, call = 0; pos < samples; ++call) {
        const std::size_t n = std::min(samples - pos, call % 2 == 0 ? std::size_t{1000} : std::size_t{37});
        const std::vector<float> m = sliceStreams(mic, streams, samples, 1, pos, n), r = sliceStreams(ref, streams, samples, width, pos, n);
        std::vector<float> o(streams * n);
        batch.processBatch(m.data(), r.data(), o.data(), n);
        for (std::size_t i = 0; i < streams; ++i)
            std::copy_n(o.begin() + static_cast<std::ptrdiff_t>(i * n), n, out.begin() + static_cast<std::ptrdiff_t>(i * samples + pos));
        pos += n;
    }
    return out;
}

// `streams` echoes of coloured noise through 128-tap paths (seeds from seed0 on), their microphones and
// far ends stream after stream (the batch's planar layout).
void stackStreams(std::size_t streams, std::size_t samples, std::uint32_t seed0, std::vector<Echo>& echoes, std::vector<float>& mic,
                  std::vector<float>& ref)
{
    mic.assign(streams * samples, 0.0f);
    ref.assign(streams * samples, 0.0f);
    for (std::size_t i = 0; i < streams; ++i) {
        echoes.push_back(makeEcho(samples, 128, seed0 + static_cast<std::uint32_t>(i), true));
        std::copy(echoes[i].d.begin(), echoes[i].d.end(), mic.begin() + static_cast<std::ptrdiff_t>(i * samples));
        std::copy(echoes[i].x.begin(), echoes[i].x.end(), ref.begin() + static_cast<std::ptrdiff_t>(i * samples));
    }
}

bool allFinite(const std::vector<float>& v)
{
    return std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); });
}

} // namespace

TEST_CASE("GPU block RLS matches the float64 per-sample RLS over N and k", "[gpu][rls][block-rls]")
{
    // The bound: relative L2 of e <= 3e-3 (10 s at N <= 256; shorter where the float64
    // reference costs minutes).
    struct Case {
        int taps;
        std::size_t samples;
        std::vector<int> blocks;
    };
    const std::vector<Case> cases{{64, 160000, {1, 7, 32, 64, 128}},
                                  {256, 160000, {32, 48, 64}},
                                  {256, 16000, {1, 7, 128}},
                                  {1024, 16000, {32, 64}},
                                  {4096, 2500, {64}}};
    for (const auto& cs : cases) {
        const Echo c = makeEcho(cs.samples, cs.taps, static_cast<std::uint32_t>(cs.taps) + 3u, true);
        const auto s = settingsFor(cs.taps);
        auto reference = std::async(std::launch::async, [&] { return perSampleReference(s, c); });
        const auto ref = reference.get();
        for (const int k : cs.blocks) {
            GpuBlockRls gpu;
            gpu.prepare(s, k, 4096);
            const auto e = runGpu(gpu, c, {1000, 37, 4096});
            const double err = quell::test::relativeL2<float, double>(e, ref);
            INFO("N " << cs.taps << ", k " << k << ", " << cs.samples << " samples: relative L2 " << err);
            REQUIRE(allFinite(e));
            CHECK(err < 3e-3);
            CHECK(gpu.health().reinitialisations == 0);
            WARN("block RLS N " << cs.taps << " k " << k << ": relative L2 against float64 " << err);
        }
    }
}

TEST_CASE("GPU block RLS follows its CPU twin, and its output does not depend on the call split", "[gpu][rls][block-rls]")
{
    const Echo c = makeEcho(24000, 200, 91, true);
    const auto s = settingsFor(200);
    for (const int k : {7, 32}) {
        const auto twin = runTwin(s, k, c);
        GpuBlockRls whole, split;
        whole.prepare(s, k, 24000);
        split.prepare(s, k, 512);
        const auto a = runGpu(whole, c, {24000});
        std::mt19937 rng(static_cast<std::uint32_t>(k));
        std::vector<std::size_t> calls;
        for (int i = 0; i < 64; ++i)
            calls.push_back(std::uniform_int_distribution<std::size_t>(1, 3 * static_cast<std::size_t>(k))(rng));
        const auto b = runGpu(split, c, calls);
        const double toTwin = quell::test::relativeL2<float, float>(a, twin);
        INFO("k " << k << ": relative L2 to the CPU twin " << toTwin);
        CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
        CHECK(toTwin < 1e-3);
        const auto wa = whole.weights(), wb = split.weights();
        CHECK(std::memcmp(wa.data(), wb.data(), wa.size() * sizeof(float)) == 0);
        CHECK(quell::test::misalignmentDb<float>(wa, c.h) < -40.0);
    }
}

TEST_CASE("GPU block RLS with a stereo far end matches the float64 per-sample RLS", "[gpu][rls][block-rls]")
{
    const Echo c = makeEcho(16000, 128, 5, true, 2);
    const auto s = settingsFor(128, 2);
    const auto ref = perSampleReference(s, c);
    GpuBlockRls gpu;
    gpu.prepare(s, 32, 1024);
    const auto e = runGpu(gpu, c, {1024, 100});
    const double err = quell::test::relativeL2<float, double>(e, ref);
    INFO("relative L2 " << err);
    CHECK(err < 3e-3);
}

TEST_CASE("GPU block RLS pauses, holds with adaptation off, sanitises and restarts as its CPU twin", "[gpu][rls][block-rls]")
{
    // Far-end silence for 1.25 s in the middle, a NaN and an Inf, adaptation off for a while.
    Echo c = makeEcho(40000, 64, 5, false);
    for (std::size_t i = 10000; i < 30000; ++i)
        c.x[i] = 0.0f;
    {
        std::vector<double> x(c.x.begin(), c.x.end());
        const auto y = quell::test::convolve(x, c.h);
        for (std::size_t i = 0; i < y.size(); ++i)
            c.d[i] = static_cast<float>(y[i]);
    }
    c.x[100] = std::numeric_limits<float>::quiet_NaN();
    c.d[200] = std::numeric_limits<float>::infinity();
    RlsSettings s = settingsFor(64);
    s.lambda = 0.999;
    BlockRls<float> twin;
    twin.prepare(s, 48);
    GpuBlockRls gpu;
    gpu.prepare(s, 48, 4096);
    std::vector<float> et(c.d.size()), eg(c.d.size());
    auto both = [&](std::size_t from, std::size_t n) {
        twin.process(std::span<const float>(c.d).subspan(from, n), std::span<const float>(c.x).subspan(from, n),
                     std::span<float>(et).subspan(from, n));
        gpu.process(c.d.data() + from, c.x.data() + from, eg.data() + from, n);
    };
    both(0, 35000);
    twin.setAdaptation(false);
    gpu.setAdaptation(false);
    both(35000, 2000);
    twin.setAdaptation(true);
    gpu.setAdaptation(true);
    both(37000, 3000);
    REQUIRE(allFinite(eg));
    CHECK(gpu.health().pausedSamples == twin.health().pausedSamples);
    CHECK(gpu.health().sanitisedSamples == 2);
    CHECK(gpu.health().reinitialisations == 0);
    CHECK(quell::test::relativeL2<float, float>(std::span<const float>(eg).subspan(201), std::span<const float>(et).subspan(201)) < 1e-3);

    // Loss of definiteness (a far end 1e4 times louder than P(0) assumes, lambda 0.9): both restart,
    // hold the rest of the block, and stay finite.
    Echo loud = makeEcho(8000, 16, 3, false);
    for (auto& v : loud.x)
        v *= 1e4f;
    {
        std::vector<double> x(loud.x.begin(), loud.x.end());
        const auto y = quell::test::convolve(x, loud.h);
        for (std::size_t i = 0; i < y.size(); ++i)
            loud.d[i] = static_cast<float>(y[i]);
    }
    RlsSettings hard = settingsFor(16);
    hard.lambda = 0.9;
    hard.delta = 1e-9;
    GpuBlockRls g2;
    g2.prepare(hard, 64, 8000);
    const auto e2 = runGpu(g2, loud, {8000});
    BlockRls<float> t2;
    t2.prepare(hard, 64);
    std::vector<float> e2t(loud.d.size());
    t2.process(loud.d, loud.x, e2t);
    INFO("GPU " << g2.health().reinitialisations << ", twin " << t2.health().reinitialisations << " re-initialisations");
    REQUIRE(allFinite(e2));
    CHECK(g2.health().reinitialisations > 0);
    CHECK(t2.health().reinitialisations > 0);
}

TEST_CASE("GPU block RLS restartCovariance keeps the weights and re-converges", "[gpu][rls][block-rls]")
{
    const Echo c = makeEcho(16000, 128, 77, true);
    const auto s = settingsFor(128);
    GpuBlockRls gpu;
    gpu.prepare(s, 32, 4096);
    std::vector<float> e(c.d.size());
    gpu.process(c.d.data(), c.x.data(), e.data(), 5003);
    const auto before = gpu.weights();
    gpu.restartCovariance();
    const auto after = gpu.weights();
    CHECK(quell::test::relativeL2<float, float>(after, before) < 1e-6);
    gpu.process(c.d.data() + 5003, c.x.data() + 5003, e.data() + 5003, c.d.size() - 5003);
    CHECK(quell::test::misalignmentDb<float>(gpu.weights(), c.h) < -40.0);
}

TEST_CASE("GpuBlockRls::whyNot is empty exactly where prepare runs, and copyWeights is weights()", "[gpu][rls][block-rls]")
{
    struct Case {
        int taps, channels, k;
        const char* reason; // empty: runs
    };
    // Unlike the per-sample kernel, any length per far-end channel runs (2 x 1021 included).
    const Case cases[] = {{1024, 1, 32, ""},          {8192, 1, 64, ""},           {2 * 4096, 2, 32, ""},
                          {2 * 1021, 2, 32, ""},      {8196, 1, 32, "8192"},       {2 * 4100, 2, 32, "8192"},
                          {1024, 1, 0, "block size"}, {1024, 1, 257, "block size"}, {3 * 256, 3, 32, "far-end channels"}};
    for (const Case& c : cases) {
        INFO(c.taps << " taps, " << c.channels << " far-end channels, k " << c.k);
        RlsSettings s;
        s.tapsPerChannel = c.taps / c.channels;
        s.channels = c.channels;
        const std::string why = GpuBlockRls::whyNot(s, c.k, 160);
        GpuBlockRls rls;
        if (*c.reason == '\0') {
            CHECK(why.empty());
            CHECK_NOTHROW(rls.prepare(s, c.k, 160));
        } else {
            CHECK_THAT(why, Catch::Contains(c.reason));
            CHECK_THROWS_AS(rls.prepare(s, c.k, 160), std::invalid_argument);
        }
    }
    // Mid-block (100 samples at k = 32), the copy without allocation equals weights(), and is not zero.
    const Echo c = makeEcho(100, 256, 5u, true);
    const auto s = settingsFor(256);
    GpuBlockRls rls;
    rls.prepare(s, 32, 160);
    std::vector<float> e(100);
    rls.process(c.d.data(), c.x.data(), e.data(), 100);
    const std::vector<float> w = rls.weights();
    std::vector<float> copied(w.size(), -1.0f);
    rls.copyWeights(copied.data(), copied.size());
    CHECK(copied == w);
    CHECK(std::any_of(w.begin(), w.end(), [](float v) { return v != 0.0f; }));
}

TEST_CASE("GPU block RLS: processSplit gives the bits of its calls one after the other", "[gpu][rls][block-rls]")
{
    // Calls of 1 to 300 samples split anywhere (at 0, mid-block, on a block's end, at the call's end),
    // with a restart at some splits and adaptation switched at others; the weights at the split too.
    const Echo c = makeEcho(20000, 300, 77, true);
    const auto s = settingsFor(300);
    GpuBlockRls joined, apart;
    joined.prepare(s, 32, 300);
    apart.prepare(s, 32, 300);
    std::mt19937 rng(78);
    std::vector<float> a(c.d.size()), b(c.d.size()), wa(300), wb(300);
    int restarts = 0, checks = 0;
    bool adapt = true;
    for (std::size_t pos = 0, call = 0; pos < c.d.size(); ++call) {
        const std::size_t n = std::min(c.d.size() - pos, std::uniform_int_distribution<std::size_t>(1, 300)(rng));
        const std::size_t split = call % 7 == 0 ? 0 : call % 7 == 1 ? n : std::uniform_int_distribution<std::size_t>(0, n)(rng);
        const bool restart = call % 11 == 3;
        const bool adaptAfter = call % 13 == 5 ? !adapt : adapt;
        joined.processSplit(c.d.data() + pos, c.x.data() + pos, a.data() + pos, n, split, restart, adaptAfter, wa.data(), wa.size());
        apart.process(c.d.data() + pos, c.x.data() + pos, b.data() + pos, split);
        apart.copyWeights(wb.data(), wb.size());
        if (restart)
            apart.restartCovariance();
        apart.setAdaptation(adaptAfter);
        apart.process(c.d.data() + pos + split, c.x.data() + pos + split, b.data() + pos + split, n - split);
        adapt = adaptAfter;
        restarts += restart ? 1 : 0;
        ++checks;
        REQUIRE(wa == wb);
        pos += n;
    }
    INFO(checks << " calls, " << restarts << " restarts");
    REQUIRE(allFinite(a));
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    CHECK(joined.weights() == apart.weights());
    CHECK(joined.health().pausedSamples == apart.health().pausedSamples);
    CHECK(restarts > 5);
    // Longer than maxCall: the pieces in turn, the same bits.
    GpuBlockRls longJoined, longApart;
    longJoined.prepare(s, 32, 100);
    longApart.prepare(s, 32, 100);
    std::vector<float> la(1000), lb(1000), lwa(300), lwb(300);
    longJoined.processSplit(c.d.data(), c.x.data(), la.data(), 1000, 437, true, true, lwa.data(), lwa.size());
    longApart.process(c.d.data(), c.x.data(), lb.data(), 437);
    longApart.copyWeights(lwb.data(), lwb.size());
    longApart.restartCovariance();
    longApart.process(c.d.data() + 437, c.x.data() + 437, lb.data() + 437, 563);
    CHECK(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)) == 0);
    CHECK(lwa == lwb);
    CHECK_THROWS_AS(longJoined.processSplit(c.d.data(), c.x.data(), la.data(), 10, 11, false, true, lwa.data(), lwa.size()), std::out_of_range);
}

TEST_CASE("GPU block RLS: every stream of a batch outputs what a filter of its own does, bit for bit", "[gpu][rls][block-rls]")
{
    // Awkward sizes: N = 300 and a stereo 2 x 77, k = 32 and 48, calls of 1000 and 37 samples; stream 1's
    // far end falls silent for a while (its own pauses), stream 2 holds a NaN (its own sanitising).
    struct Shape {
        int tapsPerChannel, channels, k, streams;
    };
    for (const Shape shape : {Shape{300, 1, 32, 5}, Shape{77, 2, 48, 3}, Shape{300, 1, 32, 37}}) {
        INFO(shape.tapsPerChannel << " taps x " << shape.channels << ", k " << shape.k << ", " << shape.streams << " streams");
        constexpr std::size_t samples = 6001;
        const auto s = settingsFor(shape.tapsPerChannel, shape.channels);
        const std::size_t C = static_cast<std::size_t>(shape.channels), S = static_cast<std::size_t>(shape.streams);
        std::vector<Echo> echoes;
        std::vector<float> mic(S * samples), ref(S * samples * C), out(S * samples, std::numeric_limits<float>::quiet_NaN());
        for (std::size_t i = 0; i < S; ++i) {
            Echo c = makeEcho(samples, shape.tapsPerChannel, 900u + static_cast<std::uint32_t>(i), i % 2 == 0, shape.channels);
            if (i == 1)
                std::fill(c.x.begin() + 2000 * C, c.x.begin() + 3500 * C, 0.0f);
            if (i == 2)
                c.d[1234] = std::numeric_limits<float>::quiet_NaN();
            std::copy(c.d.begin(), c.d.end(), mic.begin() + static_cast<std::ptrdiff_t>(i * samples));
            std::copy(c.x.begin(), c.x.end(), ref.begin() + static_cast<std::ptrdiff_t>(i * samples * C));
            echoes.push_back(std::move(c));
        }
        GpuBlockRls batch;
        batch.prepare(s, shape.k, 1000, shape.streams);
        REQUIRE(batch.streams() == shape.streams);
        CHECK_THROWS_AS(batch.process(mic.data(), ref.data(), out.data(), 10), std::logic_error);
        out = runBatchInCalls(batch, mic, ref, S, samples, C);
        for (std::size_t i = 0; i < S; ++i) {
            if (S > 8 && i > 2 && i + 1 < S)
                continue; // of 37 streams, the first three and the last are compared
            INFO("stream " << i);
            GpuBlockRls single;
            single.prepare(s, shape.k, 1000);
            const auto e = runGpu(single, echoes[i], {1000, 37});
            const std::vector<float> batched(out.begin() + static_cast<std::ptrdiff_t>(i * samples),
                                             out.begin() + static_cast<std::ptrdiff_t>((i + 1) * samples));
            REQUIRE(allFinite(batched));
            CHECK(std::memcmp(e.data(), batched.data(), e.size() * sizeof(float)) == 0);
            CHECK(single.weights() == batch.weights(static_cast<int>(i)));
            CHECK(single.health().pausedSamples == batch.health(static_cast<int>(i)).pausedSamples);
            CHECK(single.health().sanitisedSamples == batch.health(static_cast<int>(i)).sanitisedSamples);
        }
        CHECK(batch.health(1).pausedSamples > 1000);
        CHECK(batch.health(2).sanitisedSamples == 1);
        CHECK(batch.health(0).sanitisedSamples == 0);
        CHECK_THROWS_AS(batch.weights(shape.streams), std::out_of_range);
    }
}

TEST_CASE("GPU block RLS from 4096 taps at k = 64 (V as a GEMM's tiles): call splits and a batch's streams keep a lone filter's bits",
          "[gpu][rls][block-rls]")
{
    // 4100 taps: a stride past the taps (4160), nine parts of V's sum, the last one short; k = 64 and 96
    // (two tiles of steps, the second part-filled).
    constexpr int taps = 4100;
    constexpr std::size_t samples = 2600, S = 2;
    const auto s = settingsFor(taps);
    for (const int k : {64, 96}) {
        INFO("k " << k);
        std::vector<Echo> echoes;
        std::vector<float> mic(S * samples), ref(S * samples);
        for (std::size_t i = 0; i < S; ++i) {
            Echo c = makeEcho(samples, taps, 4100u + static_cast<std::uint32_t>(i), true);
            std::copy(c.d.begin(), c.d.end(), mic.begin() + static_cast<std::ptrdiff_t>(i * samples));
            std::copy(c.x.begin(), c.x.end(), ref.begin() + static_cast<std::ptrdiff_t>(i * samples));
            echoes.push_back(std::move(c));
        }
        GpuBlockRls whole, split, batch;
        whole.prepare(s, k, samples);
        split.prepare(s, k, 512);
        batch.prepare(s, k, 1000, static_cast<int>(S));
        const auto a = runGpu(whole, echoes[0], {samples});
        std::mt19937 rng(static_cast<std::uint32_t>(k));
        std::vector<std::size_t> calls;
        for (int i = 0; i < 64; ++i)
            calls.push_back(std::uniform_int_distribution<std::size_t>(1, 3 * static_cast<std::size_t>(k))(rng));
        const auto b = runGpu(split, echoes[0], calls);
        REQUIRE(allFinite(a));
        CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
        CHECK(whole.weights() == split.weights());
        const std::vector<float> out = runBatchInCalls(batch, mic, ref, S, samples, 1);
        CHECK(std::memcmp(a.data(), out.data(), a.size() * sizeof(float)) == 0);
        CHECK(whole.weights() == batch.weights(0));
        GpuBlockRls second;
        second.prepare(s, k, 1000);
        const auto e1 = runGpu(second, echoes[1], {1000, 37});
        CHECK(std::memcmp(e1.data(), out.data() + samples, e1.size() * sizeof(float)) == 0);
        // Fewer samples than taps, yet the coloured far end's echo is mostly learnt (-31 dB on an H200,
        // 2026-11-29). The accuracy against float64 is the case above's (4096 taps).
        double err = 0.0, in = 0.0;
        for (std::size_t t = samples - 600; t < samples; ++t) {
            err += static_cast<double>(a[t]) * a[t];
            in += static_cast<double>(echoes[0].d[t]) * echoes[0].d[t];
        }
        WARN("4100 taps, k " << k << ": error over the last 600 samples " << 10.0 * std::log10(err / in) << " dB of the microphone");
        CHECK(err < 0.01 * in);
    }
}

TEST_CASE("GPU block RLS: restarting one stream of a batch leaves the others bit for bit as they were", "[gpu][rls][block-rls]")
{
    constexpr std::size_t samples = 8000, split = 3010; // the restart is asked mid-block (3010 = 94 x 32 + 2)
    constexpr int streams = 3;
    const auto s = settingsFor(128);
    std::vector<Echo> echoes;
    std::vector<float> mic, ref;
    stackStreams(streams, samples, 40u, echoes, mic, ref);
    auto planar = [&](std::size_t from, std::size_t n, std::vector<float>& m, std::vector<float>& r) {
        m = sliceStreams(mic, streams, samples, 1, from, n);
        r = sliceStreams(ref, streams, samples, 1, from, n);
    };
    std::vector<float> m, r, o1(streams * split), o2(streams * (samples - split));
    GpuBlockRls restarted, plain;
    restarted.prepare(s, 32, 4096, streams);
    plain.prepare(s, 32, 4096, streams);
    planar(0, split, m, r);
    restarted.processBatch(m.data(), r.data(), o1.data(), split);
    plain.processBatch(m.data(), r.data(), o1.data(), split);
    const auto before = restarted.weights(1);
    restarted.restartCovariance(1);
    CHECK_THROWS_AS(restarted.restartCovariance(streams), std::out_of_range);
    planar(split, samples - split, m, r);
    std::vector<float> p2(o2.size());
    restarted.processBatch(m.data(), r.data(), o2.data(), samples - split);
    plain.processBatch(m.data(), r.data(), p2.data(), samples - split);
    for (int i : {0, 2}) {
        INFO("stream " << i);
        CHECK(std::memcmp(o2.data() + i * (samples - split), p2.data() + i * (samples - split), (samples - split) * sizeof(float)) == 0);
    }
    // Stream 1 took P = I / delta at its block's end: its outputs differ from there on, its weights were
    // kept through the restart, and it re-converges.
    CHECK(std::memcmp(o2.data() + (samples - split), p2.data() + (samples - split), (samples - split) * sizeof(float)) != 0);
    CHECK(std::memcmp(o2.data() + (samples - split), p2.data() + (samples - split), 30 * sizeof(float)) == 0);
    const double atRestart = quell::test::misalignmentDb<float>(before, echoes[1].h);
    const double after = quell::test::misalignmentDb<float>(restarted.weights(1), echoes[1].h);
    INFO("misalignment at the restart " << atRestart << " dB, 4990 samples later " << after << " dB");
    CHECK(atRestart < -20.0);
    CHECK(after < -30.0);
    CHECK(after < atRestart - 5.0);
}

TEST_CASE("GPU block RLS: a stream's restart delta is the delta its P restarts from, until it is reset",
          "[gpu][rls][block-rls][levelmatch]")
{
    // As dsp::Rls::setRestartDelta (Tests/cpu/FarEndLevelMatchTests.cpp), per stream of a batch:
    //  - stream 1 told delta 0.001 before its first sample starts from P = I / 0.001 (and the bounded
    //    trace's bound taps / 0.001): the bits of a lone filter prepared with 0.001; streams 0 and 2 those
    //    of lone filters with the settings' 0.03;
    //  - told 0.001 and restarted mid-run, its outputs equal those of the same restart without the new
    //    delta up to the restart and differ after it, the other streams' not at all;
    //  - after resetStream(1), a 0.03 filter again.
    constexpr std::size_t samples = 4000, first = 2016; // 63 passes of 32
    constexpr int streams = 3;
    auto s = settingsFor(128);
    s.delta = 0.03;
    auto small = s;
    small.delta = 0.001;
    std::vector<Echo> echoes;
    std::vector<float> mic, ref;
    stackStreams(streams, samples, 70u, echoes, mic, ref);
    auto lone = [&](const RlsSettings& settings, int stream) {
        GpuBlockRls f;
        f.prepare(settings, 32, 4096, 1);
        std::vector<float> e(samples);
        f.process(echoes[static_cast<std::size_t>(stream)].d.data(), echoes[static_cast<std::size_t>(stream)].x.data(), e.data(), samples);
        return e;
    };
    auto part = [&](std::size_t stream, const std::vector<float>& all, std::size_t from, std::size_t n) {
        return std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(stream * samples + from),
                                  all.begin() + static_cast<std::ptrdiff_t>(stream * samples + from + n));
    };
    GpuBlockRls batch;
    batch.prepare(s, 32, 4096, streams);
    batch.setRestartDelta(1, 0.001);
    CHECK_THROWS_AS(batch.setRestartDelta(streams, 0.001), std::out_of_range);
    CHECK_THROWS_AS(batch.setRestartDelta(0, -1.0), std::invalid_argument);
    std::vector<float> out(streams * samples);
    batch.processBatch(mic.data(), ref.data(), out.data(), samples);
    for (int i = 0; i < streams; ++i) {
        INFO("stream " << i);
        CHECK(part(static_cast<std::size_t>(i), out, 0, samples) == lone(i == 1 ? small : s, i));
    }
    CHECK(part(1, out, 0, samples) != lone(s, 1));

    // Mid-run, two batches restart stream 1 after `first` samples, one with the new delta.
    std::vector<float> o1(streams * samples), o2(streams * samples), m, r, e(streams * samples);
    GpuBlockRls told, plain;
    for (auto* b : {&told, &plain})
        b->prepare(s, 32, 4096, streams);
    auto run = [&](GpuBlockRls& b, std::vector<float>& o) {
        for (const auto& [from, n] : {std::pair{std::size_t{0}, first}, std::pair{first, samples - first}}) {
            m = sliceStreams(mic, streams, samples, 1, from, n);
            r = sliceStreams(ref, streams, samples, 1, from, n);
            b.processBatch(m.data(), r.data(), e.data(), n);
            for (std::size_t i = 0; i < streams; ++i)
                std::copy(e.begin() + static_cast<std::ptrdiff_t>(i * n), e.begin() + static_cast<std::ptrdiff_t>((i + 1) * n),
                          o.begin() + static_cast<std::ptrdiff_t>(i * samples + from));
            if (from == 0) {
                if (&b == &told)
                    b.setRestartDelta(1, 0.001);
                b.restartCovariance(1);
            }
        }
    };
    run(told, o1);
    run(plain, o2);
    CHECK(part(0, o1, 0, samples) == part(0, o2, 0, samples));
    CHECK(part(2, o1, 0, samples) == part(2, o2, 0, samples));
    CHECK(part(1, o1, 0, first + 32) == part(1, o2, 0, first + 32));
    CHECK(part(1, o1, first + 32, samples - first - 32) != part(1, o2, first + 32, samples - first - 32));

    batch.resetStream(0);
    batch.resetStream(1);
    batch.resetStream(2);
    batch.processBatch(mic.data(), ref.data(), out.data(), samples);
    CHECK(part(1, out, 0, samples) == lone(s, 1));
}

TEST_CASE("GPU block RLS: a batch with controls per stream gives each stream a lone filter's bits", "[gpu][rls][block-rls][multistream]")
{
    // Calls of 160 samples (k = 32), 4 streams at a pitch of 200: each call, each stream's adaptation on
    // or off and now and then a restart, chosen at random; stream 1 reset at call 60 (a new call joins)
    // and stream 3 idle (silence, no adaptation) for calls 20 to 29. Lone filters take the same controls
    // between their calls (setAdaptation, restartCovariance, reset).
    constexpr int streams = 4;
    constexpr std::size_t call = 160, pitch = 200, calls = 120, samples = call * calls;
    const auto s = settingsFor(256);
    std::vector<Echo> echoes;
    for (int i = 0; i < streams; ++i)
        echoes.push_back(makeEcho(samples, 256, 70u + static_cast<std::uint32_t>(i), i % 2 == 0));
    GpuBlockRls batch;
    std::vector<GpuBlockRls> lone(streams);
    prepareBatchAndLone(batch, lone, s, pitch, call);
    std::mt19937 rng(5);
    std::vector<float> mic(streams * pitch), ref(streams * pitch), out(streams * pitch);
    std::vector<float> loneOut(call);
    std::vector<unsigned char> adapting(streams), restart(streams);
    std::size_t compared = 0, differing = 0;
    for (std::size_t c = 0; c < calls; ++c) {
        if (c == 60) {
            batch.resetStream(1);
            lone[1].reset();
        }
        for (int i = 0; i < streams; ++i) {
            const bool idle = i == 3 && c >= 20 && c < 30;
            adapting[i] = idle ? 0 : (rng() % 5 != 0);
            restart[i] = !idle && c > 0 && rng() % 9 == 0;
            for (std::size_t t = 0; t < call; ++t) {
                mic[i * pitch + t] = idle ? 0.0f : echoes[i].d[c * call + t];
                ref[i * pitch + t] = idle ? 0.0f : echoes[i].x[c * call + t];
            }
        }
        batch.processBatch(mic.data(), ref.data(), out.data(), call, pitch, adapting.data(), restart.data());
        for (int i = 0; i < streams; ++i) {
            if (restart[i])
                lone[i].restartCovariance();
            lone[i].setAdaptation(adapting[i] != 0);
            lone[i].process(mic.data() + i * pitch, ref.data() + i * pitch, loneOut.data(), call);
            ++compared;
            if (std::memcmp(loneOut.data(), out.data() + i * pitch, call * sizeof(float)) != 0)
                ++differing;
            const auto w = lone[i].weights();
            REQUIRE(std::memcmp(w.data(), batch.mirroredWeights(i), w.size() * sizeof(float)) == 0);
        }
    }
    INFO(differing << " of " << compared << " stream calls differ from the lone filter's");
    CHECK(differing == 0);
    for (int i = 0; i < streams; ++i)
        CHECK(lone[i].health().pausedSamples == batch.health(i).pausedSamples);
    CHECK(batch.health(3).pausedSamples >= 1600);
    // Stream 1 converged again after its reset.
    CHECK(quell::test::misalignmentDb<float>(batch.weights(1), echoes[1].h) < -30.0);
    // Calls that do not begin and end a block, and a pitch shorter than the call, are refused.
    CHECK_THROWS_AS(batch.processBatch(mic.data(), ref.data(), out.data(), 100, pitch, adapting.data(), nullptr), std::logic_error);
    CHECK_THROWS_AS(batch.processBatch(mic.data(), ref.data(), out.data(), 160, 150, adapting.data(), nullptr), std::invalid_argument);
    CHECK_THROWS_AS(batch.resetStream(streams), std::out_of_range);
}

TEST_CASE("GPU block RLS: a held stream sits calls out and goes on as a lone filter given only its calls, bit for bit",
          "[gpu][rls][block-rls][multistream]")
{
    // Three streams in calls of 160 (k = 32): stream 0 never held, stream 1 held for runs of calls (three,
    // one, five), stream 2 from the first call and then every seventh. A lone filter of each takes only
    // the calls its stream took part in. A bounded-trace check every 20 samples (under k: two recurrence
    // launches a block) puts each stream's checks at its own samples once the holds part them. Mono at
    // 200 taps, and a stereo far end at 2 x 100 (two history rows a stream to carry).
    for (const int channels : {1, 2}) {
        const int tapsPerChannel = channels == 1 ? 200 : 100;
        INFO(channels << " far-end channel(s)");
        constexpr int streams = 3;
        constexpr std::size_t call = 160, pitch = 192, calls = 90;
        RlsSettings s = settingsFor(tapsPerChannel, channels);
        s.traceCheckSamples = 20;
        const std::size_t C = static_cast<std::size_t>(channels);
        std::vector<Echo> echoes;
        for (int i = 0; i < streams; ++i)
            echoes.push_back(makeEcho(call * calls, tapsPerChannel, 90u + static_cast<std::uint32_t>(i), i != 1, channels));
        GpuBlockRls batch;
        std::vector<GpuBlockRls> lone(streams);
        prepareBatchAndLone(batch, lone, s, pitch, call);
        auto heldAt = [](int stream, std::size_t c) {
            if (stream == 1)
                return (c >= 3 && c < 6) || c == 17 || (c >= 40 && c < 45);
            return stream == 2 && c % 7 == 0;
        };
        std::vector<float> mic(streams * pitch), ref(streams * pitch * C), out(streams * pitch), loneOut(call);
        std::vector<unsigned char> adapting(streams, 1), held(streams);
        std::vector<std::size_t> next(streams, 0);   // each stream's next sample of its own recording
        std::size_t compared = 0, differing = 0, heldCalls = 0, outTouched = 0;
        for (std::size_t c = 0; c < calls; ++c) {
            for (int i = 0; i < streams; ++i) {
                held[i] = heldAt(i, c) ? 1 : 0;
                const std::size_t from = next[i];
                for (std::size_t t = 0; t < call; ++t) {
                    // A held stream's staging holds what the batch must not read (read, it would count as sanitised).
                    const float junk = std::numeric_limits<float>::quiet_NaN();
                    mic[i * pitch + t] = held[i] ? junk : echoes[i].d[from + t];
                    for (std::size_t ch = 0; ch < C; ++ch)
                        ref[(i * pitch + t) * C + ch] = held[i] ? junk : echoes[i].x[(from + t) * C + ch];
                    out[i * pitch + t] = 7.0f;   // a held stream's out stays so
                }
            }
            batch.processBatch(mic.data(), ref.data(), out.data(), call, pitch, adapting.data(), nullptr, held.data());
            for (int i = 0; i < streams; ++i) {
                if (held[i]) {
                    ++heldCalls;
                    for (std::size_t t = 0; t < call; ++t)
                        outTouched += out[i * pitch + t] != 7.0f ? 1 : 0;
                } else {
                    lone[i].process(mic.data() + i * pitch, ref.data() + i * pitch * C, loneOut.data(), call);
                    next[i] += call;
                    ++compared;
                    if (std::memcmp(loneOut.data(), out.data() + i * pitch, call * sizeof(float)) != 0)
                        ++differing;
                }
                const auto w = lone[i].weights();
                REQUIRE(std::memcmp(w.data(), batch.mirroredWeights(i), w.size() * sizeof(float)) == 0);
            }
        }
        INFO(differing << " of " << compared << " stream calls differ from the lone filter's; " << heldCalls << " held calls");
        CHECK(differing == 0);
        CHECK(heldCalls == 9 + 13);
        CHECK(outTouched == 0);
        for (int i = 0; i < streams; ++i) {
            CHECK(lone[i].health().pausedSamples == batch.health(i).pausedSamples);
            CHECK(batch.health(i).sanitisedSamples == 0);   // the held calls' staging was not read
        }
        // Each stream converged on its own echo path, the held ones too.
        for (int i = 0; i < streams; ++i)
            CHECK(quell::test::misalignmentDb<float>(batch.weights(i), echoes[i].h) < -25.0);
    }
}

TEST_CASE("GPU block RLS: a held stream's bounded-trace checks fall at its own samples, at k = 32 and k = 128",
          "[gpu][rls][block-rls][multistream]")
{
    // A far end of one sinusoid excites two directions of P; the others grow by 1 / lambda a step from
    // trace(P0) = taps / delta, the bound, so from the first check on the checks decide each stretch's
    // forgetting factor (1 above the bound, lambda below). A check every 23 samples, which divides no call:
    // a stream held for a call then checks at other samples than the batch's count would put them, and
    // only its own count gives a lone filter's bits. k = 128 runs the per-step recurrence kernel (past the
    // elimination's k), k = 32 the elimination, each in launches of at most 23 steps.
    for (const int k : {32, 128}) {
        INFO("k = " << k);
        constexpr int streams = 2, taps = 160;   // more taps than k, as the canceller has
        const std::size_t call = k == 32 ? 160 : 256, pitch = call + 32, calls = 40;
        RlsSettings s = settingsFor(taps);
        s.traceCheckSamples = 23;
        s.lambda = 0.999;
        std::vector<Echo> echoes;
        echoes.push_back(makeEcho(call * calls, taps, 120u, true));
        Echo tone;
        std::vector<double> x(call * calls);
        for (std::size_t n = 0; n < x.size(); ++n)
            x[n] = 0.1 * std::sin(0.3 * static_cast<double>(n));
        tone.h = quell::test::randomSystem(taps, 121u, taps / 6.0);
        std::vector<double> d = quell::test::convolve(x, tone.h);
        const auto noise = quell::test::whiteNoise(x.size(), 122u, 1e-4);
        d.resize(x.size());
        for (std::size_t n = 0; n < x.size(); ++n)
            d[n] += noise[n];
        tone.x = quell::test::cast<float>(std::span<const double>(x));
        tone.d = quell::test::cast<float>(std::span<const double>(d));
        echoes.push_back(std::move(tone));
        GpuBlockRls batch;
        std::vector<GpuBlockRls> lone(streams);
        prepareBatchAndLone(batch, lone, s, pitch, call, k);
        auto heldAt = [](int stream, std::size_t c) { return stream == 1 ? (c == 2 || c == 5 || c == 6 || c == 11) : c == 3; };
        std::vector<float> mic(streams * pitch), ref(streams * pitch), out(streams * pitch), loneOut(call);
        std::vector<unsigned char> adapting(streams, 1), held(streams);
        std::vector<std::size_t> next(streams, 0);
        std::size_t compared = 0, differing = 0;
        for (std::size_t c = 0; c < calls; ++c) {
            for (int i = 0; i < streams; ++i) {
                held[i] = heldAt(i, c) ? 1 : 0;
                for (std::size_t t = 0; t < call; ++t) {
                    mic[i * pitch + t] = held[i] ? 0.0f : echoes[i].d[next[i] + t];
                    ref[i * pitch + t] = held[i] ? 0.0f : echoes[i].x[next[i] + t];
                }
            }
            batch.processBatch(mic.data(), ref.data(), out.data(), call, pitch, adapting.data(), nullptr, held.data());
            for (int i = 0; i < streams; ++i) {
                if (!held[i]) {
                    lone[i].process(mic.data() + i * pitch, ref.data() + i * pitch, loneOut.data(), call);
                    next[i] += call;
                    ++compared;
                    differing += std::memcmp(loneOut.data(), out.data() + i * pitch, call * sizeof(float)) != 0 ? 1 : 0;
                }
                const auto w = lone[i].weights();
                REQUIRE(std::memcmp(w.data(), batch.mirroredWeights(i), w.size() * sizeof(float)) == 0);
            }
        }
        INFO(differing << " of " << compared << " stream calls differ from the lone filter's");
        CHECK(compared == 2 * calls - 5);
        CHECK(differing == 0);
        for (int i = 0; i < streams; ++i) {
            CHECK(lone[i].health().reinitialisations == batch.health(i).reinitialisations);
            CHECK(lone[i].health().pausedSamples == batch.health(i).pausedSamples);
        }
        // The noise stream's filter converged beside the held one.
        CHECK(quell::test::misalignmentDb<float>(batch.weights(0), echoes[0].h) < -25.0);
    }
}

TEST_CASE("GPU block RLS endurance: 10 minutes at 16 kHz, far-end gaps, echo path change, ENR 40 dB", "[gpu][rls][block-rls]")
{
    // The per-sample kernel's endurance case ([rls endurance]), at k = 32 in the engine's calls (10 ms at
    // 16 kHz: 160 samples, five blocks a call).
    constexpr int taps = 256;
    const quell::test::EnduranceCase endurance = quell::test::makeEnduranceCase();
    RlsSettings s = settingsFor(taps);
    s.lambda = 0.99998;
    GpuBlockRls gpu;
    gpu.prepare(s, 32, 160);
    const auto r = quell::test::runEndurance(
        endurance, taps, 160, [&](const float* d, const float* x, float* e, std::size_t n) { gpu.process(d, x, e, n); },
        [&] { return gpu.weights(); }, "block rls endurance");
    quell::test::checkEndurance("block rls endurance", taps, s.lambda, r, gpu.health());
}
