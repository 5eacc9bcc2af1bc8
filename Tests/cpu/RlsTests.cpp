// SPDX-License-Identifier: GPL-3.0-or-later
#include <catch2/catch.hpp>

#include <random>

#include "dsp/Nlms.h"
#include "dsp/Rls.h"
#include "support/Signals.h"

using namespace quell;

namespace {

// Textbook exponentially weighted RLS (Haykin), float64, no reordering, no safeguards.
struct NaiveRls {
    int n;
    double lambda;
    std::vector<double> P, w, u;
    NaiveRls(int taps, double lam, double delta) : n(taps), lambda(lam), P(static_cast<std::size_t>(taps * taps), 0.0), w(static_cast<std::size_t>(taps)), u(static_cast<std::size_t>(taps))
    {
        for (int i = 0; i < n; ++i) P[static_cast<std::size_t>(i * n + i)] = 1.0 / delta;
    }
    double step(double d, double x) { return stepChannels(d, &x, 1); }
    // u stacks n / channels samples of each far-end channel, channel after channel.
    double stepChannels(double d, const double* x, int channels)
    {
        const int len = n / channels;
        for (int c = 0; c < channels; ++c) {
            for (int i = len - 1; i > 0; --i) u[static_cast<std::size_t>(c * len + i)] = u[static_cast<std::size_t>(c * len + i - 1)];
            u[static_cast<std::size_t>(c * len)] = x[c];
        }
        std::vector<double> pu(static_cast<std::size_t>(n), 0.0);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) pu[static_cast<std::size_t>(i)] += P[static_cast<std::size_t>(i * n + j)] * u[static_cast<std::size_t>(j)];
        double upu = 0.0, y = 0.0;
        for (int i = 0; i < n; ++i) {
            upu += u[static_cast<std::size_t>(i)] * pu[static_cast<std::size_t>(i)];
            y += w[static_cast<std::size_t>(i)] * u[static_cast<std::size_t>(i)];
        }
        const double e = d - y;
        const double denom = lambda + upu;
        for (int i = 0; i < n; ++i) w[static_cast<std::size_t>(i)] += pu[static_cast<std::size_t>(i)] / denom * e;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                P[static_cast<std::size_t>(i * n + j)] = (P[static_cast<std::size_t>(i * n + j)] - pu[static_cast<std::size_t>(i)] * pu[static_cast<std::size_t>(j)] / denom) / lambda;
        return e;
    }
};

struct EchoCase {
    std::vector<double> x, d, h;
};

EchoCase makeEcho(std::size_t samples, std::size_t taps, std::uint32_t seed, double noise, bool coloured)
{
    EchoCase c;
    c.x = coloured ? test::colouredNoise(samples, seed) : test::whiteNoise(samples, seed, 0.1);
    c.h = test::randomSystem(taps, seed + 1, static_cast<double>(taps) / 4.0);
    c.d = test::convolve(c.x, c.h);
    const auto v = test::whiteNoise(samples, seed + 2, noise);
    for (std::size_t i = 0; i < samples; ++i) c.d[i] += v[i];
    return c;
}

template <typename T>
std::vector<T> runRls(dsp::Rls<T>& rls, const EchoCase& c, std::vector<std::size_t> blocks)
{
    const auto x = test::cast<T>(c.x), d = test::cast<T>(c.d);
    std::vector<T> e(x.size());
    std::size_t pos = 0, b = 0;
    while (pos < x.size()) {
        const std::size_t len = std::min(x.size() - pos, blocks[b++ % blocks.size()]);
        rls.process(std::span<const T>(d.data() + pos, len), std::span<const T>(x.data() + pos, len),
                    std::span<T>(e.data() + pos, len));
        pos += len;
    }
    return e;
}

} // namespace

TEST_CASE("float64 RLS follows the textbook recursion", "[dsp][rls]")
{
    for (const int taps : {1, 7, 32, 61}) {
        const auto c = makeEcho(1499, static_cast<std::size_t>(taps), static_cast<std::uint32_t>(taps), 1e-3, taps % 2 == 1);
        dsp::RlsSettings s;
        s.tapsPerChannel = taps;
        s.lambda = 0.999;
        s.delta = 1e-2;
        s.silenceFloor = 0.0;
        dsp::Rls<double> rls;
        rls.prepare(s);
        const auto e = runRls(rls, c, {1499});
        NaiveRls naive(taps, s.lambda, s.delta);
        std::vector<double> ref(c.x.size());
        for (std::size_t i = 0; i < c.x.size(); ++i) ref[i] = naive.step(c.d[i], c.x[i]);
        INFO("taps " << taps);
        CHECK(test::relativeL2<double, double>(e, ref) < 1e-9);
        CHECK(rls.health().reinitialisations == 0);
    }
}

TEST_CASE("RLS does not wind up on a band-limited far end (bounded trace)", "[dsp][rls]")
{
    // A narrowband call upsampled to 16 kHz: nothing above 3.4 kHz, for 30 s. Forgetting divides P by
    // lambda every sample in the directions the far end never excites; unbounded, P grows until it is no
    // longer positive definite and is re-initialised (every 5 s at 256 taps, measured before the bound).
    const std::size_t taps = 256, samples = 30 * 16000;
    std::vector<double> x(samples, 0.0);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> phase(0.0, 6.283185307179586);
    for (int k = 0; k < 100; ++k) {
        const double f = 300.0 + 3100.0 * k / 99.0, p = phase(rng);
        for (std::size_t i = 0; i < samples; ++i)
            x[i] += 0.007 * std::sin(6.283185307179586 * f * static_cast<double>(i) / 16000.0 + p);
    }
    EchoCase c;
    c.x = x;
    c.h = test::randomSystem(taps, 4, 40.0);
    c.d = test::convolve(c.x, c.h);
    const auto v = test::whiteNoise(samples, 5, 1e-4);
    for (std::size_t i = 0; i < samples; ++i) c.d[i] += v[i];
    dsp::RlsSettings s;
    s.tapsPerChannel = static_cast<int>(taps);
    s.lambda = 0.9999;
    dsp::Rls<float> rls;
    rls.prepare(s);
    rls.setWorkerThreads(1);
    const auto e = runRls(rls, c, {160});
    // The echo is cancelled all the same (what the far end excites is learnt), with no re-initialisation.
    double pe = 0.0, pd = 0.0;
    for (std::size_t i = samples - 16000; i < samples; ++i) {
        pe += double(e[i]) * e[i];
        pd += c.d[i] * c.d[i];
    }
    INFO(rls.health().reinitialisations << " re-initialisations, last second " << 10.0 * std::log10(pd / pe) << " dB");
    CHECK(rls.health().reinitialisations == 0);
    CHECK(10.0 * std::log10(pd / pe) > 35.0);
}

TEST_CASE("Multichannel RLS (stacked regressor) follows the textbook recursion and splits freely", "[dsp][rls]")
{
    for (const int perChannel : {1, 23, 32}) {
        const int channels = 2, taps = channels * perChannel;
        const std::size_t samples = 1201;
        // Two partly correlated far-end channels (a stereo mix) through two different paths.
        const auto a = test::whiteNoise(samples, 40u + static_cast<unsigned>(perChannel), 0.1);
        const auto b = test::whiteNoise(samples, 50u + static_cast<unsigned>(perChannel), 0.1);
        std::vector<double> xl(samples), xr(samples);
        for (std::size_t i = 0; i < samples; ++i) {
            xl[i] = a[i] + 0.5 * b[i];
            xr[i] = b[i] + 0.3 * a[i];
        }
        const auto hl = test::randomSystem(static_cast<std::size_t>(perChannel), 60, 4.0);
        const auto hr = test::randomSystem(static_cast<std::size_t>(perChannel), 61, 4.0);
        const auto yl = test::convolve(std::span<const double>(xl), std::span<const double>(hl));
        const auto yr = test::convolve(std::span<const double>(xr), std::span<const double>(hr));
        const auto noise = test::whiteNoise(samples, 62, 1e-3);
        std::vector<double> d(samples), inter(2 * samples);
        for (std::size_t i = 0; i < samples; ++i) {
            d[i] = yl[i] + yr[i] + noise[i];
            inter[2 * i] = xl[i];
            inter[2 * i + 1] = xr[i];
        }
        dsp::RlsSettings s;
        s.tapsPerChannel = perChannel;
        s.channels = channels;
        s.lambda = 0.999;
        s.silenceFloor = 0.0;
        NaiveRls naive(taps, s.lambda, s.delta);
        std::vector<double> ref(samples);
        for (std::size_t i = 0; i < samples; ++i)
            ref[i] = naive.stepChannels(d[i], &inter[2 * i], channels);
        for (const std::size_t block : {std::size_t{1}, std::size_t{97}, samples}) {
            dsp::Rls<double> rls;
            rls.prepare(s);
            std::vector<double> e(samples);
            for (std::size_t pos = 0; pos < samples; pos += block) {
                const std::size_t len = std::min(block, samples - pos);
                rls.processInterleaved(std::span<const double>(d).subspan(pos, len),
                                       std::span<const double>(inter).subspan(2 * pos, 2 * len), std::span<double>(e).subspan(pos, len));
            }
            INFO("taps per channel " << perChannel << ", blocks of " << block);
            CHECK(test::relativeL2<double, double>(e, ref) < 1e-9);
        }
        // Both paths identified: the weights are [hl, hr].
        if (perChannel == 32) {
            std::vector<double> h(hl.begin(), hl.end());
            h.insert(h.end(), hr.begin(), hr.end());
            dsp::Rls<double> rls;
            rls.prepare(s);
            std::vector<double> e(samples);
            rls.processInterleaved(d, inter, e);
            CHECK(test::misalignmentDb<double>(rls.weights(), h) < -30.0);
        }
    }
    dsp::RlsSettings bad;
    bad.tapsPerChannel = 8193;   // 16386 in all: past 16384
    bad.channels = 2;
    CHECK_THROWS_AS(dsp::validate(bad), std::invalid_argument);
    dsp::RlsSettings two;
    two.tapsPerChannel = 4;
    two.channels = 2;
    dsp::Rls<float> rls;
    rls.prepare(two);
    std::vector<float> m(4), x(4), e(4);
    CHECK_THROWS_AS(rls.process(m, x, e), std::invalid_argument);          // one channel given to two
    CHECK_THROWS_AS(rls.processInterleaved(m, x, e), std::invalid_argument);  // 4 samples, not 2 x 4
}

TEST_CASE("float64 RLS identifies a random 256-tap system to -60 dB misalignment", "[dsp][rls]")
{
    const std::size_t taps = 256;
    const auto c = makeEcho(8000, taps, 42, 1e-6, false);
    dsp::RlsSettings s;
    s.tapsPerChannel = static_cast<int>(taps);
    s.lambda = 0.9999;
    s.delta = 1e-2;
    dsp::Rls<double> rls;
    rls.prepare(s);
    runRls(rls, c, {4096});
    const double m = test::misalignmentDb<double>(rls.weights(), c.h);
    INFO("misalignment " << m << " dB");
    CHECK(m < -60.0);
}

TEMPLATE_TEST_CASE("RLS output does not depend on how the input is split into blocks", "[dsp][rls]", float, double)
{
    const auto c = makeEcho(3001, 97, 7, 1e-3, true);
    dsp::RlsSettings s;
    s.tapsPerChannel = 97;
    dsp::Rls<TestType> whole, split;
    whole.prepare(s);
    split.prepare(s);
    const auto a = runRls(whole, c, {3001});
    const auto b = runRls(split, c, {1, 37, 256, 5, 113});
    CHECK(a == b);
}

TEST_CASE("float32 RLS stays close to float64 on coloured input", "[dsp][rls]")
{
    for (const int taps : {64, 257}) {
        const auto c = makeEcho(16000, static_cast<std::size_t>(taps), 11, 1e-3, true);
        dsp::RlsSettings s;
        s.tapsPerChannel = taps;
        dsp::Rls<double> r64;
        dsp::Rls<float> r32;
        r64.prepare(s);
        r32.prepare(s);
        const auto e64 = runRls(r64, c, {16000});
        const auto e32 = runRls(r32, c, {16000});
        const double err = test::relativeL2<float, double>(e32, e64);
        INFO("taps " << taps << " relative L2 " << err);
        CHECK(err < 1e-3);
    }
}

TEST_CASE("RLS pauses on far-end silence and recovers after it", "[dsp][rls]")
{
    auto c = makeEcho(40000, 64, 5, 1e-4, false);
    for (std::size_t i = 10000; i < 30000; ++i) { // 1.25 s of silence: lambda^-20000 would overflow float
        c.x[i] = 0.0;
    }
    c.d = test::convolve(c.x, c.h);
    dsp::RlsSettings s;
    s.tapsPerChannel = 64;
    s.lambda = 0.999;
    dsp::Rls<float> rls;
    rls.prepare(s);
    const auto e = runRls(rls, c, {4096});
    for (float v : e) REQUIRE(std::isfinite(v));
    CHECK(rls.health().pausedSamples >= 19000);
    CHECK(test::misalignmentDb<float>(rls.weights(), c.h) < -40.0);
}

TEST_CASE("RLS adaptation can be turned off and on: weights kept, samples counted as paused", "[dsp][rls]")
{
    const auto c = makeEcho(6000, 48, 13, 1e-4, false);
    dsp::RlsSettings s;
    s.tapsPerChannel = 48;
    dsp::Rls<float> rls;
    rls.prepare(s);
    const auto x = test::cast<float>(c.x), d = test::cast<float>(c.d);
    std::vector<float> e(x.size());
    rls.process(std::span<const float>(d).first(3000), std::span<const float>(x).first(3000), std::span<float>(e).first(3000));
    const std::vector<float> before(rls.weights().begin(), rls.weights().end());
    const auto paused = rls.health().pausedSamples;
    rls.setAdaptation(false);
    rls.process(std::span<const float>(d).subspan(3000, 1000), std::span<const float>(x).subspan(3000, 1000),
                std::span<float>(e).subspan(3000, 1000));
    CHECK(std::equal(before.begin(), before.end(), rls.weights().begin()));
    CHECK(rls.health().pausedSamples == paused + 1000);
    // The output is still the echo cancelled with the weights it has.
    CHECK(test::reductionDb(std::span<const float>(d).subspan(3000, 1000), std::span<const float>(e).subspan(3000, 1000)) > 30.0);
    rls.setAdaptation(true);
    rls.process(std::span<const float>(d).subspan(4000), std::span<const float>(x).subspan(4000), std::span<float>(e).subspan(4000));
    CHECK_FALSE(std::equal(before.begin(), before.end(), rls.weights().begin()));
}

TEST_CASE("RLS replaces NaN and Inf input and keeps running", "[dsp][rls]")
{
    auto c = makeEcho(6000, 32, 9, 1e-4, false);
    auto x = test::cast<float>(c.x), d = test::cast<float>(c.d);
    x[100] = std::numeric_limits<float>::quiet_NaN();
    d[200] = std::numeric_limits<float>::infinity();
    dsp::RlsSettings s;
    s.tapsPerChannel = 32;
    dsp::Rls<float> rls;
    rls.prepare(s);
    std::vector<float> e(x.size());
    rls.process(d, x, e);
    for (float v : e) REQUIRE(std::isfinite(v));
    CHECK(rls.health().sanitisedSamples == 2);
}

TEST_CASE("RLS settings out of range are rejected with a message", "[dsp][rls]")
{
    dsp::Rls<float> rls;
    dsp::RlsSettings s;
    s.tapsPerChannel = 0;
    CHECK_THROWS_WITH(rls.prepare(s), Catch::Contains("taps"));
    s = {};
    s.lambda = 1.5;
    CHECK_THROWS_WITH(rls.prepare(s), Catch::Contains("lambda"));
    s = {};
    s.delta = -1.0;
    CHECK_THROWS_WITH(rls.prepare(s), Catch::Contains("delta"));
}

TEMPLATE_TEST_CASE("NLMS matches a naive float64 NLMS and converges", "[dsp][nlms]", float, double)
{
    const auto c = makeEcho(20011, 48, 3, 1e-4, false);
    dsp::NlmsSettings s;
    s.taps = 48;
    s.stepSize = 0.5;
    dsp::Nlms<TestType> nlms;
    nlms.prepare(s);
    const auto x = test::cast<TestType>(c.x), d = test::cast<TestType>(c.d);
    std::vector<TestType> e(x.size());
    std::size_t pos = 0;
    std::mt19937 rng(1);
    while (pos < x.size()) {
        const std::size_t len = std::min<std::size_t>(x.size() - pos, std::uniform_int_distribution<std::size_t>(1, 300)(rng));
        nlms.process(std::span<const TestType>(d.data() + pos, len), std::span<const TestType>(x.data() + pos, len),
                     std::span<TestType>(e.data() + pos, len));
        pos += len;
    }
    // Naive reference.
    std::vector<double> w(48, 0.0), u(48, 0.0), ref(x.size());
    for (std::size_t n = 0; n < x.size(); ++n) {
        for (std::size_t i = 47; i > 0; --i) u[i] = u[i - 1];
        u[0] = c.x[n];
        double y = 0.0, uu = 0.0;
        for (std::size_t i = 0; i < 48; ++i) { y += w[i] * u[i]; uu += u[i] * u[i]; }
        ref[n] = c.d[n] - y;
        for (std::size_t i = 0; i < 48; ++i) w[i] += 0.5 * ref[n] * u[i] / (uu + s.epsilon);
    }
    const double tol = std::is_same_v<TestType, float> ? 1e-3 : 1e-9;
    CHECK(test::relativeL2<TestType, double>(e, ref) < tol);
    CHECK(test::misalignmentDb<TestType>(nlms.weights(), c.h) < -30.0);
}
