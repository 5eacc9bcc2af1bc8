// SPDX-License-Identifier: GPL-3.0-or-later
// The block-exact RLS against the per-sample RLS (dsp/Rls.h, float64: the reference every RLS answers
// to), over block sizes, call splits, far-end channels and the safeguards.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "dsp/BlockRls.h"
#include "dsp/Rls.h"
#include "support/Signals.h"

using namespace quell;

namespace {

struct Echo {
    std::vector<double> x, d, h;
};

// x: AR(1) noise (pole 0.9) or white; d: x through a decaying random path, plus white noise.
Echo makeEcho(std::size_t samples, std::size_t taps, std::uint32_t seed, double noise, bool coloured, std::size_t channels = 1)
{
    Echo c;
    c.x.assign(samples * channels, 0.0);
    c.d.assign(samples, 0.0);
    for (std::size_t ch = 0; ch < channels; ++ch) {
        const auto x = coloured ? test::colouredNoise(samples, seed + 10 * static_cast<std::uint32_t>(ch))
                                : test::whiteNoise(samples, seed + 10 * static_cast<std::uint32_t>(ch), 0.1);
        const auto h = test::randomSystem(taps, seed + 1 + 10 * static_cast<std::uint32_t>(ch), static_cast<double>(taps) / 4.0);
        const auto y = test::convolve(x, h);
        for (std::size_t i = 0; i < samples; ++i) {
            c.x[i * channels + ch] = x[i];
            c.d[i] += y[i];
        }
        c.h.insert(c.h.end(), h.begin(), h.end());
    }
    const auto v = test::whiteNoise(samples, seed + 2, noise);
    for (std::size_t i = 0; i < samples; ++i)
        c.d[i] += v[i];
    return c;
}

// Runs any RLS over the case in calls of the given lengths (cycled).
template <typename T, typename Filter>
std::vector<T> run(Filter& f, const Echo& c, const std::vector<std::size_t>& calls)
{
    const auto x = test::cast<T>(c.x), d = test::cast<T>(c.d);
    const std::size_t channels = x.size() / d.size();
    std::vector<T> e(d.size());
    std::size_t pos = 0, k = 0;
    while (pos < d.size()) {
        const std::size_t len = std::min(d.size() - pos, calls[k++ % calls.size()]);
        const std::span<const T> mic(d.data() + pos, len), ref(x.data() + pos * channels, len * channels);
        const std::span<T> out(e.data() + pos, len);
        if (channels == 1)
            f.process(mic, ref, out);
        else
            f.processInterleaved(mic, ref, out);
        pos += len;
    }
    return e;
}

dsp::RlsSettings settingsFor(int taps, int channels = 1)
{
    dsp::RlsSettings s;
    s.tapsPerChannel = taps;
    s.channels = channels;
    return s;
}

std::vector<double> perSampleReference(const Echo& c, const dsp::RlsSettings& s)
{
    dsp::Rls<double> rls;
    rls.prepare(s);
    rls.setWorkerThreads(1);
    return run<double>(rls, c, {4096});
}

} // namespace

TEST_CASE("float64 block RLS equals the per-sample RLS for every block size", "[dsp][rls][block-rls]")
{
    for (const int taps : {1, 7, 64, 97}) {
        const auto c = makeEcho(6000, static_cast<std::size_t>(taps), static_cast<std::uint32_t>(taps), 1e-3, taps != 7);
        const auto s = settingsFor(taps);
        const auto ref = perSampleReference(c, s);
        for (const int k : {1, 7, 32, 64, 128}) {
            dsp::BlockRls<double> block;
            block.prepare(s, k);
            const auto e = run<double>(block, c, {6000});
            INFO("taps " << taps << ", k " << k);
            CHECK(test::relativeL2<double, double>(e, ref) < 1e-9);
            CHECK(block.health().reinitialisations == 0);
            // The weights after the last sample agree too (the block is part-way through).
            dsp::Rls<double> rls;
            rls.prepare(s);
            run<double>(rls, c, {6000});
            CHECK(test::relativeL2<double, double>(block.weights(), rls.weights()) < 1e-9);
        }
    }
}

TEMPLATE_TEST_CASE("block RLS output is bit-identical whatever the calls' lengths", "[dsp][rls][block-rls]", float, double)
{
    const auto c = makeEcho(5003, 97, 7, 1e-3, true);
    const auto s = settingsFor(97);
    for (const int k : {7, 32}) {
        dsp::BlockRls<TestType> whole, split, single;
        whole.prepare(s, k);
        split.prepare(s, k);
        single.prepare(s, k);
        const auto a = run<TestType>(whole, c, {5003});
        // Random call lengths, some longer than a block, some shorter.
        std::mt19937 rng(static_cast<std::uint32_t>(k));
        std::vector<std::size_t> calls;
        for (int i = 0; i < 64; ++i)
            calls.push_back(std::uniform_int_distribution<std::size_t>(1, 3 * static_cast<std::size_t>(k))(rng));
        const auto b = run<TestType>(split, c, calls);
        const auto one = run<TestType>(single, c, {1});
        INFO("k " << k);
        CHECK(a == b);
        CHECK(a == one);
        CHECK(std::equal(whole.weights().begin(), whole.weights().end(), split.weights().begin()));
    }
}

TEST_CASE("float32 block RLS stays within 3e-3 of the float64 per-sample RLS over 10 s", "[dsp][rls][block-rls]")
{
    // 10 s at 16 kHz of AR(1) noise (pole 0.9); the figure for a plain float32 version of the
    // recursion is 1.0e-3 in steady state and 3.4e-3 over the first 0.5 s at N = 256, k = 32.
    for (const int taps : {64, 256}) {
        const auto c = makeEcho(160000, static_cast<std::size_t>(taps), 11, 1e-3, true);
        const auto s = settingsFor(taps);
        const auto ref = perSampleReference(c, s);
        dsp::Rls<double> rls;
        rls.prepare(s);
        run<double>(rls, c, {16000});
        const double refMisalignment = test::misalignmentDb<double>(rls.weights(), c.h);
        for (const int k : {32, 64}) {
            dsp::BlockRls<float> block;
            block.prepare(s, k);
            const auto e = run<float>(block, c, {160, 37, 1024});
            const double whole = test::relativeL2<float, double>(e, ref);
            const double start = test::relativeL2<float, double>(std::span<const float>(e).first(8000), std::span<const double>(ref).first(8000));
            INFO("taps " << taps << ", k " << k << ": relative L2 " << whole << " (first 0.5 s " << start << ")");
            CHECK(whole < 3e-3);
            CHECK(start < 1e-2);
            CHECK(block.health().reinitialisations == 0);
            // As deep as float64 (the noise floor sets it: about -35 dB at 256 taps).
            CHECK(test::misalignmentDb<float>(block.weights(), c.h) < refMisalignment + 0.5);
        }
    }
}

TEST_CASE("block RLS with a stereo far end equals the per-sample stacked-regressor RLS", "[dsp][rls][block-rls]")
{
    const auto c = makeEcho(4000, 48, 21, 1e-4, true, 2);
    const auto s = settingsFor(48, 2);
    const auto ref = perSampleReference(c, s);
    dsp::BlockRls<double> block;
    block.prepare(s, 32);
    const auto e = run<double>(block, c, {100, 7});
    CHECK(test::relativeL2<double, double>(e, ref) < 1e-9);
    dsp::BlockRls<double> mono;
    CHECK_THROWS_WITH(([&] {
                          mono.prepare(s, 32);
                          std::vector<double> a(4), b(8), o(4);
                          mono.process(a, std::span<const double>(b).first(4), o);
                      }()),
                      Catch::Contains("processInterleaved"));
}

TEST_CASE("block RLS pauses on far-end silence and with adaptation off, like the per-sample RLS", "[dsp][rls][block-rls]")
{
    auto c = makeEcho(40000, 64, 5, 1e-4, false);
    for (std::size_t i = 10000; i < 30000; ++i) // 1.25 s of silence mid-block: lambda^-20000 would overflow float
        c.x[i] = 0.0;
    c.d = test::convolve(c.x, c.h);
    dsp::RlsSettings s = settingsFor(64);
    s.lambda = 0.999;
    const auto ref = perSampleReference(c, s);
    dsp::BlockRls<double> block;
    block.prepare(s, 48);
    const auto e = run<double>(block, c, {4096});
    dsp::Rls<double> rls;
    rls.prepare(s);
    run<double>(rls, c, {4096});
    CHECK(block.health().pausedSamples == rls.health().pausedSamples);
    CHECK(block.health().pausedSamples >= 19000);
    CHECK(test::relativeL2<double, double>(e, ref) < 1e-9);

    // Adaptation off: weights kept, samples counted as paused, then adapting again.
    dsp::BlockRls<float> f;
    f.prepare(s, 32);
    const auto x = test::cast<float>(c.x), d = test::cast<float>(c.d);
    std::vector<float> out(x.size());
    f.process(std::span<const float>(d).first(3001), std::span<const float>(x).first(3001), std::span<float>(out).first(3001));
    const std::vector<float> before(f.weights().begin(), f.weights().end());
    const auto paused = f.health().pausedSamples;
    f.setAdaptation(false);
    f.process(std::span<const float>(d).subspan(3001, 1000), std::span<const float>(x).subspan(3001, 1000),
              std::span<float>(out).subspan(3001, 1000));
    CHECK(std::equal(before.begin(), before.end(), f.weights().begin()));
    CHECK(f.health().pausedSamples == paused + 1000);
    CHECK(test::reductionDb(std::span<const float>(d).subspan(3001, 1000), std::span<const float>(out).subspan(3001, 1000)) > 30.0);
    f.setAdaptation(true);
    f.process(std::span<const float>(d).subspan(4001, 500), std::span<const float>(x).subspan(4001, 500),
              std::span<float>(out).subspan(4001, 500));
    CHECK_FALSE(std::equal(before.begin(), before.end(), f.weights().begin()));
}

TEST_CASE("block RLS does not wind up on a band-limited far end (bounded trace)", "[dsp][rls][block-rls]")
{
    // The per-sample RLS's case: a narrowband call upsampled to 16 kHz, 30 s, 256 taps.
    const std::size_t taps = 256, samples = 30 * 16000;
    Echo c;
    c.x.assign(samples, 0.0);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> phase(0.0, 6.283185307179586);
    for (int k = 0; k < 100; ++k) {
        const double f = 300.0 + 3100.0 * k / 99.0, p = phase(rng);
        for (std::size_t i = 0; i < samples; ++i)
            c.x[i] += 0.007 * std::sin(6.283185307179586 * f * static_cast<double>(i) / 16000.0 + p);
    }
    c.h = test::randomSystem(taps, 4, 40.0);
    c.d = test::convolve(c.x, c.h);
    const auto v = test::whiteNoise(samples, 5, 1e-4);
    for (std::size_t i = 0; i < samples; ++i)
        c.d[i] += v[i];
    dsp::RlsSettings s = settingsFor(static_cast<int>(taps));
    s.lambda = 0.9999;
    dsp::BlockRls<float> block;
    block.prepare(s, 64);
    const auto e = run<float>(block, c, {160});
    const auto df = test::cast<float>(c.d);
    const double last = test::reductionDb(std::span<const float>(df).last(16000), std::span<const float>(e).last(16000));
    INFO(block.health().reinitialisations << " re-initialisations, last second " << last << " dB");
    CHECK(block.health().reinitialisations == 0);
    CHECK(last > 35.0);
}

TEST_CASE("block RLS replaces NaN and Inf input and restarts P when it loses definiteness", "[dsp][rls][block-rls]")
{
    auto c = makeEcho(6000, 32, 9, 1e-4, false);
    auto x = test::cast<float>(c.x), d = test::cast<float>(c.d);
    x[100] = std::numeric_limits<float>::quiet_NaN();
    d[200] = std::numeric_limits<float>::infinity();
    dsp::BlockRls<float> block;
    block.prepare(settingsFor(32), 16);
    std::vector<float> e(x.size());
    block.process(d, x, e);
    for (float v : e)
        REQUIRE(std::isfinite(v));
    CHECK(block.health().sanitisedSamples == 2);
    CHECK(test::reductionDb(std::span<const float>(d).last(1000), std::span<const float>(e).last(1000)) > 30.0);

    // A far end far louder than P(0) assumes with lambda at its lowest: P loses definiteness in float32
    // within a block; the filter restarts P mid-block, keeps w, and goes on cancelling.
    auto loud = makeEcho(8000, 16, 3, 1e-6, false);
    for (auto& v : loud.x)
        v *= 1e4;
    loud.d = test::convolve(loud.x, loud.h);
    dsp::RlsSettings s = settingsFor(16);
    s.lambda = 0.9;
    s.delta = 1e-9;
    dsp::BlockRls<float> f;
    f.prepare(s, 64);
    dsp::Rls<float> perSample;
    perSample.prepare(s);
    const auto eb = run<float>(f, loud, {8000});
    run<float>(perSample, loud, {8000});
    INFO("block " << f.health().reinitialisations << ", per-sample " << perSample.health().reinitialisations << " re-initialisations");
    for (float v : eb)
        REQUIRE(std::isfinite(v));
    // Both restart hundreds of times here (446 and 450 when written).
    CHECK(perSample.health().reinitialisations > 0);
    CHECK(f.health().reinitialisations > 0);
}

TEST_CASE("block RLS restartCovariance keeps the weights mid-block", "[dsp][rls][block-rls]")
{
    const auto c = makeEcho(4000, 32, 17, 1e-4, true);
    dsp::BlockRls<double> block;
    dsp::Rls<double> rls;
    const auto s = settingsFor(32);
    block.prepare(s, 64);
    rls.prepare(s);
    const auto x = c.x, d = c.d;
    std::vector<double> eb(x.size()), er(x.size());
    block.process(std::span<const double>(d).first(1000), std::span<const double>(x).first(1000), std::span<double>(eb).first(1000));
    rls.process(std::span<const double>(d).first(1000), std::span<const double>(x).first(1000), std::span<double>(er).first(1000));
    block.restartCovariance();
    rls.restartCovariance();
    CHECK(test::relativeL2<double, double>(block.weights(), rls.weights()) < 1e-9);
    block.process(std::span<const double>(d).subspan(1000), std::span<const double>(x).subspan(1000), std::span<double>(eb).subspan(1000));
    rls.process(std::span<const double>(d).subspan(1000), std::span<const double>(x).subspan(1000), std::span<double>(er).subspan(1000));
    CHECK(test::relativeL2<double, double>(eb, er) < 1e-9);
}

TEST_CASE("block RLS rejects a block size out of range", "[dsp][rls][block-rls]")
{
    dsp::BlockRls<float> block;
    CHECK_THROWS_WITH(block.prepare(settingsFor(64), 0), Catch::Contains("block size"));
    CHECK_THROWS_WITH(block.prepare(settingsFor(64), dsp::BlockRls<float>::kMaxBlock + 1), Catch::Contains("block size"));
    CHECK_THROWS_WITH(block.prepare(settingsFor(0), 8), Catch::Contains("taps"));
}
