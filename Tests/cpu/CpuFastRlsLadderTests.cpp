// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU's mono RLS from 2048 taps on: the fast RLS with ones of a half and a quarter of its length
// beside it (makeCpuRlsFilter, Source/aec/CpuRlsFilter.cpp), checked against the long filter alone.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "aec/LinearEchoFilter.h"
#include "dsp/FastRls.h"
#include "support/FilterCallSplit.h"
#include "support/Signals.h"

using namespace quell;

namespace {

struct Echo {
    std::vector<float> x, d;
};

// A white far end through a random decaying path of `pathTaps`, with white noise `enrDb` under the echo.
Echo makeEcho(std::size_t samples, std::size_t pathTaps, double decay, double enrDb, std::uint32_t seed)
{
    const auto x = test::whiteNoise(samples, seed, 0.1);
    const auto h = test::randomSystem(pathTaps, seed + 1, decay);
    auto d = test::convolve(x, h);
    double echo = 0.0;
    for (const double v : d)
        echo += v * v;
    const auto v = test::whiteNoise(samples, seed + 2, std::sqrt(echo / static_cast<double>(samples)) * std::pow(10.0, -enrDb / 20.0));
    for (std::size_t i = 0; i < samples; ++i)
        d[i] += v[i];
    return {test::cast<float>(x), test::cast<float>(d)};
}

dsp::RlsSettings settingsFor(int taps)
{
    dsp::RlsSettings s;
    s.tapsPerChannel = taps;
    s.lambda = 1.0 - 1.0 / (10.0 * taps);
    return s;
}

double energy(const std::vector<float>& e, std::size_t from, std::size_t to)
{
    double sum = 0.0;
    for (std::size_t i = from; i < to; ++i)
        sum += double(e[i]) * e[i];
    return sum;
}

std::vector<float> runLadder(aec::LinearEchoFilter& f, const Echo& c)
{
    std::vector<float> e(c.d.size());
    f.process(c.d, c.x, e);
    return e;
}

std::vector<float> runAlone(const dsp::RlsSettings& s, const Echo& c, std::vector<float>* weights = nullptr)
{
    dsp::FastRls f;
    f.prepare(s);
    std::vector<float> e(c.d.size());
    f.process(c.d, c.x, e);
    if (weights)
        *weights = std::vector<float>(f.weights().begin(), f.weights().end());
    return e;
}

} // namespace

TEST_CASE("a mono CPU RLS from 2048 taps on runs fast RLS filters of a half and a quarter of the length beside it",
          "[fastrls-ladder]")
{
    CHECK(aec::fastRlsCompanionTaps(1024).empty());
    CHECK(aec::fastRlsCompanionTaps(2047).empty());
    CHECK(aec::fastRlsCompanionTaps(2048) == std::vector<int>{1024, 512});
    CHECK(aec::fastRlsCompanionTaps(4096) == std::vector<int>{2048, 1024});
    CHECK(aec::makeCpuRlsFilter(settingsFor(1024))->description() == "CPU float64 fast RLS, 1024 taps");
    CHECK(aec::makeCpuRlsFilter(settingsFor(4096))->description() == "CPU float64 fast RLS, 4096 taps (2048 and 1024 beside it)");
    const auto ladder = aec::makeCpuRlsFilter(settingsFor(2048));
    CHECK(ladder->description() == "CPU float64 fast RLS, 2048 taps (1024 and 512 beside it)");
    CHECK(ladder->taps() == 2048);
    CHECK(ladder->weights().size() == 2048);
}

TEST_CASE("a shorter filter leads while the longer one has too few samples for its taps", "[fastrls-ladder]")
{
    // 10 dB of noise under the echo of a 300-tap path: least squares over n samples leaves about taps / n
    // of the noise in the error, so from 0.25 to 1 s the 1024- and 512-tap filters are ahead of the 2048-tap one.
    const Echo c = makeEcho(16000, 300, 60.0, 10.0, 41u);
    const auto ladder = aec::makeCpuRlsFilter(settingsFor(2048));
    const std::vector<float> eLadder = runLadder(*ladder, c), eAlone = runAlone(settingsFor(2048), c);
    const double gainDb = 10.0 * std::log10(energy(eAlone, 4000, 16000) / energy(eLadder, 4000, 16000));
    INFO("error of the 2048-tap filter alone over the three filters', 0.25 to 1 s: " << gainDb << " dB");
    CHECK(gainDb > 0.5);
}

TEST_CASE("the longest filter leads once it has learnt a path the shorter ones cannot hold", "[fastrls-ladder]")
{
    // A path of 1800 taps with a slow decay: the shorter filters cannot model its tail. After 5 s the ladder's
    // output is the 2048-tap filter's, sample for sample, and so are its weights.
    const Echo c = makeEcho(96000, 1800, 900.0, 40.0, 7u);
    const auto ladder = aec::makeCpuRlsFilter(settingsFor(2048));
    std::vector<float> wAlone;
    const std::vector<float> eLadder = runLadder(*ladder, c), eAlone = runAlone(settingsFor(2048), c, &wAlone);
    const std::size_t last = c.d.size() - 16000;
    std::size_t different = 0;
    for (std::size_t i = last; i < c.d.size(); ++i)
        different += eLadder[i] != eAlone[i];
    CHECK(different == 0);
    CHECK(ladder->weights() == wAlone);
    const double reductionDb = 10.0 * std::log10(energy(c.d, last, c.d.size()) / energy(eLadder, last, c.d.size()));
    CHECK(reductionDb > 25.0);
}

TEST_CASE("after a path change under loud noise the shorter filters lead, then the longest takes the lead back",
          "[fastrls-ladder]")
{
    // 3 s of a short path with little noise; then 10 s of a path whose tail beyond 1024 taps is 20 dB under
    // the echo, with noise 10 dB under it, so that every filter's error is mostly that noise. The shorter
    // filters, quicker to follow, lead through the first second after the change; over the last 2 s the
    // output is the 2048-tap filter's, sample for sample, in all but a few 10 ms segments at most.
    const std::size_t change = 48000, n = change + 160000;
    const auto x = test::whiteNoise(n, 23u, 0.1);
    const auto echoA = test::convolve(x, test::randomSystem(300, 24u, 60.0));
    const auto echoB = test::convolve(x, test::randomSystem(1800, 25u, 445.0));
    std::vector<double> d(n);
    const auto noise = test::whiteNoise(n, 26u, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
        const bool after = i >= change;
        // Echo power 0.01 either way (unit-energy paths, white far end at 0.1): noise 40 then 10 dB under it.
        d[i] = (after ? echoB[i] : echoA[i]) + noise[i] * (after ? 0.1 * std::pow(10.0, -0.5) : 1e-3);
    }
    const Echo c{test::cast<float>(x), test::cast<float>(d)};
    const auto ladder = aec::makeCpuRlsFilter(settingsFor(2048));
    const std::vector<float> eLadder = runLadder(*ladder, c), eAlone = runAlone(settingsFor(2048), c);
    std::size_t different = 0;
    for (std::size_t i = change; i < change + 16000; ++i)
        different += eLadder[i] != eAlone[i];
    INFO("samples of the first second after the change where the output is not the 2048-tap filter's: " << different);
    CHECK(different > 8000);   // the shorter filters lead there
    const std::size_t last = n - 32000;
    different = 0;
    for (std::size_t i = last; i < n; ++i)
        different += eLadder[i] != eAlone[i];
    INFO("samples of the last 2 s where the output is not the 2048-tap filter's: " << different);
    CHECK(different <= 32000 / 50);
    const double fromAloneDb = 10.0 * std::log10(energy(eAlone, last, n) / energy(eLadder, last, n));
    CHECK(std::abs(fromAloneDb) < 0.05);
}

TEST_CASE("the three filters' output does not depend on how the signal is split into calls, and it does not allocate",
          "[fastrls-ladder]")
{
    const Echo c = makeEcho(12000, 500, 120.0, 15.0, 3u);
    const auto whole = aec::makeCpuRlsFilter(settingsFor(2048));
    const std::vector<float> eWhole = runLadder(*whole, c);

    const auto split = aec::makeCpuRlsFilter(settingsFor(2048));
    const std::vector<float> eSplit = test::processInSplitCalls(*split, c.d, c.x, 1);
    CHECK(test::realtimeViolations().allocations == 0);
    CHECK(test::realtimeViolations().locks == 0);
    CHECK(eSplit == eWhole);
    CHECK(split->weights() == whole->weights());
}

TEST_CASE("at 10 dB echo-to-noise the shorter filters take twice the memory and leave less of the noise in the weights",
          "[fastrls-ladder]")
{
    // A 300-tap path under white noise 10 dB down: every filter models it, and what each leaves of the echo
    // is the noise's error in its weights, about taps / 2L of the noise for a memory of L samples. With the
    // automatic memory (10 x the taps) the 1024-tap filter stalls 13 dB under the noise; with twice that, 16.
    // The ladder (4096 taps, 2048 and 1024 beside it) over the last 2 s of 6 s must be within 1 dB of the
    // 1024-tap filter with the longer memory, and 1.5 dB or more under it with the automatic one.
    const std::size_t n = 96000;
    const auto x = test::whiteNoise(n, 61u, 0.1);
    const auto echo = test::convolve(x, test::randomSystem(300, 62u, 60.0));
    double echoPower = 0.0;
    for (const double v : echo)
        echoPower += v * v;
    const auto noise = test::whiteNoise(n, 63u, std::sqrt(echoPower / static_cast<double>(n) * 0.1));
    std::vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i)
        d[i] = echo[i] + noise[i];
    const Echo c{test::cast<float>(x), test::cast<float>(d)};
    const std::size_t last = n - 32000;
    // The echo left in an output: the output less the noise, over the last 2 s, relative to the noise.
    auto leftDb = [&](const std::vector<float>& e) {
        double left = 0.0, noisePower = 0.0;
        for (std::size_t i = last; i < n; ++i) {
            left += (e[i] - noise[i]) * (e[i] - noise[i]);
            noisePower += noise[i] * noise[i];
        }
        return 10.0 * std::log10(left / noisePower);
    };
    const auto ladder = aec::makeCpuRlsFilter(settingsFor(4096));
    const std::vector<float> eLadder = runLadder(*ladder, c);
    const double ladderDb = leftDb(eLadder);
    // In place (out aliasing mic), in calls of 1000 samples: the same samples.
    const auto inPlace = aec::makeCpuRlsFilter(settingsFor(4096));
    std::vector<float> dInPlace = c.d;
    for (std::size_t at = 0; at < n; at += 1000) {
        const std::size_t len = std::min<std::size_t>(1000, n - at);
        inPlace->process({dInPlace.data() + at, len}, {c.x.data() + at, len}, {dInPlace.data() + at, len});
    }
    CHECK(dInPlace == eLadder);
    dsp::RlsSettings automaticMemory = settingsFor(1024), twiceMemory = settingsFor(1024);
    twiceMemory.lambda = 1.0 - 1.0 / (20.0 * 1024);
    const double automaticDb = leftDb(runAlone(automaticMemory, c)), twiceDb = leftDb(runAlone(twiceMemory, c));
    INFO("echo left under the noise: ladder " << ladderDb << " dB, 1024 taps with 10 x memory " << automaticDb
                                              << ", with 20 x " << twiceDb);
    CHECK(automaticDb - twiceDb > 2.0);
    CHECK(ladderDb < twiceDb + 1.0);
    CHECK(ladderDb < automaticDb - 1.5);
    CHECK(ladder->health().reinitialisations == 0);
}
