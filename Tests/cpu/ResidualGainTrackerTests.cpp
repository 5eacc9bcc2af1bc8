// SPDX-License-Identifier: GPL-3.0-or-later
// ResidualGainTracker: the gain settles at the chosen quantile of the residual-to-predictor ratio, falls
// fast after a filter converges, is not raised by a near end far above it, and is not used for a
// predictor that does not vary (its envelope, not its frames' fluctuation) or an output that does not
// follow it.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "aec/ResidualGainTracker.h"

using namespace quell;

namespace {

struct Frame {
    double output, predictor, present;
};

// A speech-like predictor (power wandering with a standard deviation of 10 dB) and an output that is `ratioDb` of it, times a
// log-normal spread of `spreadDb` (one standard deviation), plus `extra` independent power.
std::vector<Frame> frames(int count, double ratioDb, double spreadDb, std::uint32_t seed, double extra = 0.0)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<Frame> f;
    double level = 0.0;
    for (int i = 0; i < count; ++i) {
        level = 0.95 * level + 0.31 * 10.0 * g(rng);   // wanders with a standard deviation of 10 dB
        const double p = std::pow(10.0, level / 10.0);
        const double o = p * std::pow(10.0, (ratioDb + spreadDb * g(rng)) / 10.0) + extra;
        f.push_back({o, p, p});
    }
    return f;
}

void feed(aec::ResidualGainTracker& t, const std::vector<Frame>& fs)
{
    for (const Frame& f : fs) {
        const double o[1] = {f.output}, p[1] = {f.predictor}, n[1] = {f.present};
        t.update(o, p, n);
    }
}

// `count` frames of a stationary predictor (line noise) and an output holding a near end of its own, its
// power wandering as frames()'s does: predictor(chi, rng) draws the predictor's power, output(level, p)
// makes the output's from the near end's level in dB and the predictor's power.
template <class Predictor, class Output>
void feedLineNoise(aec::ResidualGainTracker& t, int count, std::uint32_t seed, Predictor predictor, Output output)
{
    std::mt19937 rng(seed);
    std::exponential_distribution<double> chi(1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    double level = 0.0;
    for (int i = 0; i < count; ++i) {
        level = 0.95 * level + 0.31 * 10.0 * g(rng);
        const double p = predictor(chi, rng), o = output(level, p);
        const double out[1] = {o}, pred[1] = {p}, now[1] = {p};
        t.update(out, pred, now);
    }
}

} // namespace

TEST_CASE("The residual gain settles at its quantile and falls fast after convergence", "[aec][suppressor]")
{
    aec::ResidualGainSettings s;
    s.quantile = 0.9;
    aec::ResidualGainTracker t;
    t.prepare(1, 250.0, s);
    CHECK(t.trackedDb(0) == Approx(s.initialDb));
    // 20 s of a residual at -10 dB with a spread of 3 dB: the 90 % quantile is -10 + 1.28 * 3 = -6.2 dB.
    const auto f = frames(5000, -10.0, 3.0, 1);
    feed(t, f);
    CHECK(t.trackedDb(0) == Approx(-6.2).margin(1.5));
    CHECK(t.gain(0) > 0.0);
    CHECK(t.meanCorrelation() > 0.5);   // the suppressor's far-end models need 0.15
    // The filter converges: the residual drops 30 dB. Within a second the gain follows (it learns on the
    // frames where the predictor is loud, a third of them here).
    feed(t, frames(250, -40.0, 3.0, 2));
    CHECK(t.trackedDb(0) < -30.0);
}

TEST_CASE("A near end far above the residual does not raise the gain", "[aec][suppressor]")
{
    aec::ResidualGainTracker t;
    t.prepare(1, 250.0, {});
    feed(t, frames(2500, -30.0, 3.0, 3));
    const double before = t.trackedDb(0);
    // Two seconds of double talk: a near end 35 dB over the residual in every frame.
    auto dt = frames(500, -30.0, 3.0, 4);
    for (auto& f : dt)
        f.output += f.predictor * std::pow(10.0, 5.0 / 10.0);
    feed(t, dt);
    CHECK(t.trackedDb(0) < before + 1.5);   // slow rise: 0.5 dB/s
}

TEST_CASE("A stationary predictor or an output that does not follow it gives no residual", "[aec][suppressor]")
{
    aec::ResidualGainTracker t;
    t.prepare(1, 250.0, {});
    // Line noise: the predictor's power hardly varies; the output is a near end of its own.
    feedLineNoise(
        t, 2500, 5, [](auto& chi, auto& rng) { return 1e-6 * (1.0 + 0.1 * (chi(rng) - 1.0)); },
        [](double level, double) { return 1e-3 * std::pow(10.0, level / 10.0); });
    CHECK(t.gain(0) == 0.0);
    // A speech-like predictor, but an output independent of it.
    aec::ResidualGainTracker u;
    u.prepare(1, 250.0, {});
    auto f = frames(2500, -10.0, 0.0, 6);
    const auto other = frames(2500, -10.0, 0.0, 7);
    for (std::size_t i = 0; i < f.size(); ++i)
        f[i].output = other[i].output;
    feed(u, f);
    CHECK(u.gain(0) == 0.0);
    CHECK(std::abs(u.meanCorrelation()) < 0.15);
}

TEST_CASE("A band of stationary noise whose frames fluctuate does not pass for a varying predictor", "[aec][suppressor]")
{
    // A band of two bins of stationary noise: its frames' power is a chi-square of 4 degrees of freedom
    // (variance half its squared mean, over the 0.3 threshold), its envelope over 32 ms hardly moves. The
    // output is a near end of its own plus a little of the predictor (a line's noise in the room), so it
    // follows it somewhat.
    aec::ResidualGainSettings s;
    s.minCorrelation = 0.1;
    aec::ResidualGainTracker t;
    t.prepare(1, 250.0, s);
    feedLineNoise(
        t, 2500, 8, [](auto& chi, auto& rng) { return 1e-6 * 0.5 * (chi(rng) + chi(rng)); },
        [](double level, double p) { return 1e-9 * std::pow(10.0, level / 10.0) + 0.3 * p; });
    CHECK(t.gain(0) == 0.0);
    // The same output over a speech-like predictor is used.
    aec::ResidualGainTracker u;
    u.prepare(1, 250.0, s);
    auto f = frames(2500, -10.0, 3.0, 9);
    feed(u, f);
    CHECK(u.gain(0) > 0.0);
}
