// SPDX-License-Identifier: GPL-3.0-or-later
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dsp/FastRls.h"
#include "dsp/Rls.h"
#include "support/RealtimeProbe.h"
#include "support/Signals.h"

using namespace quell;

namespace {

struct Echo {
    std::vector<float> x, d;
    std::vector<double> h;
};

Echo makeEcho(std::size_t samples, std::size_t taps, std::uint32_t seed, double noise)
{
    Echo c;
    const auto x = test::colouredNoise(samples, seed);
    c.h = test::randomSystem(taps, seed + 1, static_cast<double>(taps) / 4.0);
    auto d = test::convolve(x, c.h);
    const auto v = test::whiteNoise(samples, seed + 2, noise);
    for (std::size_t i = 0; i < samples; ++i) d[i] += v[i];
    c.x = test::cast<float>(x);
    c.d = test::cast<float>(d);
    return c;
}

dsp::RlsSettings settingsFor(int taps)
{
    dsp::RlsSettings s;
    s.tapsPerChannel = taps;
    s.lambda = 1.0 - 1.0 / (10.0 * taps + 100.0);
    s.delta = 1e-3;
    return s;
}

std::vector<float> runBlocks(dsp::FastRls& rls, const Echo& c, const std::vector<std::size_t>& blocks)
{
    std::vector<float> e(c.x.size());
    std::size_t pos = 0, b = 0;
    while (pos < c.x.size()) {
        const std::size_t len = std::min(c.x.size() - pos, blocks[b++ % blocks.size()]);
        rls.process({c.d.data() + pos, len}, {c.x.data() + pos, len}, {e.data() + pos, len});
        pos += len;
    }
    return e;
}

// The O(N^2) exponentially weighted RLS in float64, written out so that its forgetting factor can change
// between samples (P(n) = (P(n-1) - k u^T P(n-1)) / lambda(n)): what FastRls::setLambda approximates.
class ReferenceRls {
public:
    ReferenceRls(std::size_t taps, double epsilon, double lambda)
        : n_(taps), p_(taps * taps, 0.0), w_(taps, 0.0), u_(taps, 0.0), pu_(taps, 0.0), lambda_(lambda)
    {
        for (std::size_t i = 0; i < n_; ++i)
            p_[i * n_ + i] = 1.0 / epsilon;
    }
    void setLambda(double lambda) { lambda_ = lambda; }
    double process(double d, double x)
    {
        std::copy_backward(u_.begin(), u_.end() - 1, u_.end());
        u_[0] = x;
        double e = d, upu = 0.0;
        for (std::size_t i = 0; i < n_; ++i) {
            e -= w_[i] * u_[i];
            double acc = 0.0;
            for (std::size_t j = 0; j < n_; ++j)
                acc += p_[i * n_ + j] * u_[j];
            pu_[i] = acc;
            upu += u_[i] * acc;
        }
        const double denominator = lambda_ + upu;
        for (std::size_t i = 0; i < n_; ++i) {
            w_[i] += pu_[i] * e / denominator;
            for (std::size_t j = 0; j < n_; ++j)
                p_[i * n_ + j] = (p_[i * n_ + j] - pu_[i] * pu_[j] / denominator) / lambda_;
        }
        return e;
    }
    const std::vector<double>& weights() const { return w_; }

private:
    std::size_t n_;
    std::vector<double> p_, w_, u_, pu_;
    double lambda_;
};

} // namespace

TEST_CASE("Fast RLS with a new forgetting factor follows the RLS whose forgetting factor changed at that sample",
          "[dsp][rls][fast]")
{
    // The FTF is exact for one lambda; after setLambda its energies and gain are those of the old
    // weighting, and the stabilisation pulls them to the new one. A memory of 20 x the taps, then 10 x
    // (as the CPU ladder's companions when the echo-to-noise ratio rises), and back, at samples inside
    // and after the predictors' first N samples.
    for (const int taps : {16, 128}) {
        for (const std::size_t change : {std::size_t(taps / 2), std::size_t(taps), std::size_t(3000)}) {
            CAPTURE(taps, change);
            const Echo c = makeEcho(12000, static_cast<std::size_t>(taps), 31u + static_cast<std::uint32_t>(taps), 1e-3);
            const double longMemory = 1.0 - 1.0 / (20.0 * taps), shortMemory = 1.0 - 1.0 / (10.0 * taps);
            dsp::RlsSettings s = settingsFor(taps);
            s.delta = 1e-9;
            s.lambda = longMemory;
            dsp::FastRls fast;
            fast.prepare(s);
            ReferenceRls reference(static_cast<std::size_t>(taps), dsp::FastRls::initialEnergyPerDelta * s.delta, longMemory);
            std::vector<float> e(c.x.size());
            std::vector<double> er(c.x.size());
            for (std::size_t n = 0; n < c.x.size(); ++n) {
                if (n == change || n == change + 4000)
                    fast.setLambda(n == change ? shortMemory : longMemory);
                // The FTF takes a new lambda once its predictors have run 2 N samples.
                if (n == std::max(change, std::size_t(2 * taps)) || n == change + 4000)
                    reference.setLambda(n == change + 4000 ? longMemory : shortMemory);
                fast.process({&c.d[n], 1}, {&c.x[n], 1}, {&e[n], 1});
                er[n] = reference.process(c.d[n], c.x[n]);
            }
            const std::size_t settled = std::max<std::size_t>(change, 2000);
            const double errorL2 = test::relativeL2<float, double>(std::span(e).subspan(settled), std::span(er).subspan(settled));
            const double weightsL2 = test::relativeL2<float, double>(fast.weights(), reference.weights());
            INFO("errors " << errorL2 << ", weights " << weightsL2);
            CHECK(errorL2 < 3e-3);
            CHECK(weightsL2 < 5e-4);
            CHECK(fast.health().reinitialisations == 0);
        }
    }
    // reset() goes back to the settings' lambda, and a restart takes a new one at once: both the same, bit
    // for bit, as a filter prepared with that lambda.
    const Echo c = makeEcho(3000, 32, 77u, 1e-3);
    dsp::RlsSettings s = settingsFor(32), other = settingsFor(32);
    other.lambda = 1.0 - 1.0 / (20.0 * 32);
    dsp::FastRls changed, fresh, freshOther;
    changed.prepare(s);
    fresh.prepare(s);
    freshOther.prepare(other);
    changed.setLambda(other.lambda);
    CHECK(changed.lambda() == other.lambda);
    runBlocks(changed, c, {c.x.size()});
    changed.reset();
    CHECK(changed.lambda() == s.lambda);
    CHECK(runBlocks(changed, c, {c.x.size()}) == runBlocks(fresh, c, {c.x.size()}));
    changed.reset();
    changed.setLambda(other.lambda);
    changed.restartCovariance();
    CHECK(runBlocks(changed, c, {c.x.size()}) == runBlocks(freshOther, c, {c.x.size()}));
    // The deferral to the sample 2 N after a start, exactly: a lambda set before the first sample, before
    // sample 2 N - 1 or before sample 2 N gives the same bits; one set before sample 2 N + 1 does not.
    auto setBefore = [&](std::size_t at) {
        dsp::FastRls g;
        g.prepare(s);
        std::vector<float> e(c.x.size());
        for (std::size_t n = 0; n < c.x.size(); ++n) {
            if (n == at)
                g.setLambda(other.lambda);
            g.process({&c.d[n], 1}, {&c.x[n], 1}, {&e[n], 1});
        }
        return e;
    };
    const std::vector<float> atStart = setBefore(0);
    CHECK(setBefore(63) == atStart);
    CHECK(setBefore(64) == atStart);
    CHECK(setBefore(65) != atStart);
    dsp::FastRls f;
    f.prepare(settingsFor(8));
    CHECK_THROWS_AS(f.setLambda(0.0), std::invalid_argument);
    CHECK_THROWS_AS(f.setLambda(1.5), std::invalid_argument);
    CHECK_THROWS_AS(f.setLambda(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

TEST_CASE("Fast RLS is the RLS: the float64 O(N^2) recursion's errors and weights on coloured noise", "[dsp][rls][fast]")
{
    for (const int taps : {2, 3, 7, 64, 301}) {
        CAPTURE(taps);
        const Echo c = makeEcho(6000, static_cast<std::size_t>(taps), 11u + static_cast<std::uint32_t>(taps), 1e-4);
        // A start too small to matter (the FTF's start is P(0) = diag(1, lambda, .. lambda^(N-1)) / epsilon,
        // the RLS's I / epsilon; at the default epsilon they differ by up to 10 % for a few hundred samples).
        dsp::RlsSettings s = settingsFor(taps);
        s.delta = 1e-9;
        dsp::FastRls fast;
        fast.prepare(s);
        const std::vector<float> e = runBlocks(fast, c, {c.x.size()});

        // The O(N^2) RLS from the same start: P(0) = I / epsilon, epsilon = initialEnergyPerDelta x delta.
        dsp::RlsSettings r = s;
        r.delta = dsp::FastRls::initialEnergyPerDelta * s.delta;
        dsp::Rls<double> reference;
        reference.prepare(r);
        const std::vector<double> xd(c.x.begin(), c.x.end()), dd(c.d.begin(), c.d.end());
        std::vector<double> er(xd.size());
        reference.process(dd, xd, er);

        // The first samples, before the taps have seen enough to be determined, differ by the starts; later
        // the weights differ by what the predictors' dither (-100 dBFS) does to an ill-conditioned
        // regressor (1e-5 of the weights, measured, which is 1e-3 of an error 50 dB under the microphone).
        const std::size_t settled = e.size() / 2;
        CHECK(test::relativeL2<float, double>(std::span(e).subspan(settled), std::span(er).subspan(settled)) < 3e-3);
        CHECK(test::relativeL2<float, double>(fast.weights(), reference.weights()) < 1e-4);
        CHECK(fast.health().reinitialisations == 0);
        if (taps >= 7)
            CHECK(test::misalignmentDb<float>(fast.weights(), c.h) < -30.0);
    }
}

TEST_CASE("Fast RLS gives the same samples for any split of the input into calls", "[dsp][rls][fast]")
{
    const Echo c = makeEcho(5000, 128, 5, 1e-3);
    dsp::FastRls whole, split;
    whole.prepare(settingsFor(128));
    split.prepare(settingsFor(128));
    const auto a = runBlocks(whole, c, {c.x.size()});
    const auto b = runBlocks(split, c, {1, 7, 160, 33, 1000});
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        REQUIRE(a[i] == b[i]);
    for (std::size_t i = 0; i < 128; ++i)
        REQUIRE(whole.weights()[i] == split.weights()[i]);
}

TEST_CASE("Fast RLS pauses when told and on a silent far end, and keeps its weights over a restart", "[dsp][rls][fast]")
{
    const int taps = 96;
    const Echo c = makeEcho(6000, taps, 21, 1e-4);
    dsp::FastRls rls;
    rls.prepare(settingsFor(taps));
    std::vector<float> e(c.x.size());
    rls.process({c.d.data(), 4000}, {c.x.data(), 4000}, {e.data(), 4000});
    const std::vector<float> learnt(rls.weights().begin(), rls.weights().end());
    REQUIRE(test::misalignmentDb<float>(rls.weights(), c.h) < -30.0);

    // Told to pause: the error is the microphone minus the learnt filter, and the weights stay.
    rls.setAdaptation(false);
    rls.process({c.d.data() + 4000, 1000}, {c.x.data() + 4000, 1000}, {e.data() + 4000, 1000});
    CHECK(rls.health().pausedSamples == 1000);
    for (std::size_t i = 0; i < learnt.size(); ++i)
        REQUIRE(rls.weights()[i] == learnt[i]);
    CHECK(test::reductionDb({c.d.data() + 4000, 1000}, {e.data() + 4000, 1000}) > 35.0);

    // A silent far end under a talking near end: once the far end's last sample has left the taps,
    // nothing is learnt from it.
    rls.setAdaptation(true);
    const std::vector<float> silence(2000, 0.0f);
    const auto nearEnd = test::cast<float>(test::whiteNoise(2000, 9, 0.1));
    std::vector<float> out(2000);
    rls.process({nearEnd.data(), taps}, {silence.data(), taps}, {out.data(), taps});
    const std::vector<float> quiet(rls.weights().begin(), rls.weights().end());
    rls.process({nearEnd.data() + taps, 2000 - taps}, {silence.data() + taps, 2000 - taps}, {out.data() + taps, 2000 - taps});
    CHECK(rls.health().pausedSamples >= 1000 + 2000 - static_cast<std::uint64_t>(taps));
    for (std::size_t i = 0; i < quiet.size(); ++i)
        REQUIRE(rls.weights()[i] == quiet[i]);

    // A restart forgets the covariance, not the weights, and the filter goes on cancelling.
    const std::vector<float> before(rls.weights().begin(), rls.weights().end());
    rls.restartCovariance();
    for (std::size_t i = 0; i < before.size(); ++i)
        REQUIRE(rls.weights()[i] == before[i]);
    rls.process({c.d.data() + 5000, 1000}, {c.x.data() + 5000, 1000}, {e.data() + 5000, 1000});
    CHECK(test::reductionDb({c.d.data() + 5500, 500}, {e.data() + 5500, 500}) > 30.0);
    CHECK(rls.health().reinitialisations == 0);
}

TEST_CASE("Fast RLS follows an echo path change and stays stable through speech-like gaps and a narrowband far end",
          "[dsp][rls][fast]")
{
    // 40 s at 16 kHz, 512 taps, the canceller's memory (10 x the taps): coloured noise in bursts with
    // digital silence between them, then a 1 kHz tone (nothing else excited), then noise through a new path.
    const int taps = 512;
    const std::size_t second = 16000, n = 40 * second;
    const auto noise = test::colouredNoise(n, 31);
    const auto h1 = test::randomSystem(taps, 32, taps / 4.0), h2 = test::randomSystem(taps, 33, taps / 4.0);
    std::vector<double> x(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        const double t = double(i) / double(second);
        if (t < 16.0)
            x[i] = std::fmod(t, 2.0) < 1.3 ? noise[i] : 0.0;
        else if (t < 24.0)
            x[i] = 0.05 * std::sin(2.0 * 3.141592653589793 * 1000.0 * t);
        else
            x[i] = noise[i];
    }
    std::vector<double> d1 = test::convolve(x, h1), d2 = test::convolve(x, h2), d(n);
    const auto v = test::whiteNoise(n, 34, 1e-4);
    for (std::size_t i = 0; i < n; ++i)
        d[i] = (i < 30 * second ? d1[i] : d2[i]) + v[i];
    const auto xf = test::cast<float>(x), df = test::cast<float>(d);
    std::vector<float> e(n);
    dsp::FastRls rls;
    dsp::RlsSettings s = settingsFor(taps);
    s.lambda = 1.0 - 1.0 / (10.0 * taps);
    s.delta = 0.03;
    rls.prepare(s);
    rls.process({df.data(), 24 * second}, {xf.data(), 24 * second}, {e.data(), 24 * second});
    CHECK(rls.health().reinitialisations == 0);
    // Broadband noise after 8 s of the tone breaks the recursion once (FastRls.h: the dither); the
    // restart keeps the weights and the filter re-learns what the tone left undetermined.
    rls.process({df.data() + 24 * second, n - 24 * second}, {xf.data() + 24 * second, n - 24 * second},
                {e.data() + 24 * second, n - 24 * second});
    CHECK(rls.health().reinitialisations <= 1);
    for (const float sample : e)
        REQUIRE(std::isfinite(sample));
    // The last burst before the tone, the tone, the noise before the path changes, and the new path's last second.
    CHECK(test::reductionDb({df.data() + 29 * second, second}, {e.data() + 29 * second, second}) > 40.0);
    CHECK(test::reductionDb({df.data() + 14 * second, second}, {e.data() + 14 * second, second}) > 40.0);
    CHECK(test::reductionDb({df.data() + 22 * second, second}, {e.data() + 22 * second, second}) > 40.0);
    CHECK(test::reductionDb({df.data() + 39 * second, second}, {e.data() + 39 * second, second}) > 40.0);
}

TEST_CASE("Fast RLS sanitises non-finite samples, refuses several channels and never allocates after prepare",
          "[dsp][rls][fast][realtime]")
{
    dsp::FastRls rls;
    dsp::RlsSettings stereo = settingsFor(64);
    stereo.channels = 2;
    CHECK_THROWS_AS(rls.prepare(stereo), std::invalid_argument);
    CHECK_THROWS_AS(rls.prepare(settingsFor(1)), std::invalid_argument);
    rls.prepare(settingsFor(64));
    const Echo c = makeEcho(2000, 64, 41, 1e-4);
    std::vector<float> d = c.d, x = c.x, e(2000);
    d[100] = std::numeric_limits<float>::quiet_NaN();
    x[200] = std::numeric_limits<float>::infinity();
    {
        test::RealtimeProbe probe;
        rls.process(d, x, e);
        rls.restartCovariance();
        rls.reset();
        rls.process(d, x, e);
    }
    CHECK(test::realtimeViolations().allocations == 0);
    CHECK(rls.health().sanitisedSamples == 2);
    for (const float v : e)
        REQUIRE(std::isfinite(v));
    std::vector<float> shorter(10);
    CHECK_THROWS_AS(rls.process(d, x, shorter), std::invalid_argument);
}

TEST_CASE("Fast RLS after a restart is the RLS of the far end since the restart, weights kept", "[dsp][rls][fast]")
{
    for (const int taps : {3, 16, 64}) {
        CAPTURE(taps);
        const std::size_t N = static_cast<std::size_t>(taps);
        // The echo path changes where the covariance restarts.
        Echo c = makeEcho(4000, N, 41u + static_cast<std::uint32_t>(taps), 1e-4);
        const auto changed = test::randomSystem(N, 77u, static_cast<double>(taps) / 4.0);
        const std::size_t at = 2500;
        for (std::size_t n = at; n < c.x.size(); ++n) {
            double y = 0.0;
            for (std::size_t i = 0; i < N && i <= n; ++i)
                y += changed[i] * c.x[n - i];
            c.d[n] = static_cast<float>(y);
        }
        dsp::RlsSettings s = settingsFor(taps);
        s.delta = 1e-9;
        dsp::FastRls fast;
        fast.prepare(s);
        std::vector<float> e(c.x.size());
        fast.process({c.d.data(), at}, {c.x.data(), at}, {e.data(), at});
        fast.restartCovariance();
        fast.process({c.d.data() + at, c.x.size() - at}, {c.x.data() + at, c.x.size() - at}, {e.data() + at, c.x.size() - at});

        // The O(N^2) recursion written out, restarted in the same way: P = I / epsilon, the weights kept,
        // and what it learns from is the far end since the restart (zero before it); its output is the
        // microphone less the weights applied to the whole far end.
        const double lambda = s.lambda, epsilon = dsp::FastRls::initialEnergyPerDelta * s.delta;
        std::vector<double> P(N * N), w(N, 0.0), u(N, 0.0), seen(N, 0.0), pi(N), er(c.x.size());
        for (std::size_t n = 0; n < c.x.size(); ++n) {
            if (n == 0 || n == at) {
                std::fill(P.begin(), P.end(), 0.0);
                std::fill(seen.begin(), seen.end(), 0.0);
                for (std::size_t i = 0; i < N; ++i)
                    P[i * N + i] = 1.0 / epsilon;
            }
            std::rotate(u.rbegin(), u.rbegin() + 1, u.rend());
            std::rotate(seen.rbegin(), seen.rbegin() + 1, seen.rend());
            u[0] = seen[0] = c.x[n];
            double y = 0.0, ySeen = 0.0, upu = 0.0;
            for (std::size_t i = 0; i < N; ++i) {
                y += w[i] * u[i];
                ySeen += w[i] * seen[i];
                pi[i] = 0.0;
                for (std::size_t j = 0; j < N; ++j)
                    pi[i] += P[i * N + j] * seen[j];
            }
            for (std::size_t i = 0; i < N; ++i)
                upu += seen[i] * pi[i];
            er[n] = c.d[n] - y;
            const double g = (c.d[n] - ySeen) / (lambda + upu);
            for (std::size_t i = 0; i < N; ++i)
                w[i] += pi[i] * g;
            for (std::size_t i = 0; i < N; ++i)
                for (std::size_t j = 0; j < N; ++j)
                    P[i * N + j] = (P[i * N + j] - pi[i] * pi[j] / (lambda + upu)) / lambda;
        }
        const std::size_t settled = at + N + 200;
        CHECK(test::relativeL2<float, double>(std::span(e).subspan(settled), std::span(er).subspan(settled)) < 3e-3);
        CHECK(test::relativeL2<float, double>(fast.weights(), w) < 1e-4);
        // (The new path is learnt, short of what the rows of the first N samples after the restart hold
        // of the echo of the far end before it, which neither recursion can explain.)
        CHECK(test::misalignmentDb<float>(fast.weights(), changed) < -20.0);
        CHECK(fast.health().reinitialisations == 0);
    }
}
