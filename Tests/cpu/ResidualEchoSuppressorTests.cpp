// SPDX-License-Identifier: GPL-3.0-or-later
// ResidualEchoSuppressor and ComfortNoise: transparent where there is no echo estimate (the output is the
// input delayed by exactly the reported latency), independent of block splits, suppresses a residual
// that follows the echo estimate, and with comfort noise keeps the noise floor instead of gating it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>

#include "aec/ResidualEchoSuppressor.h"
#include "support/FrontEndScene.h"
#include "support/Signals.h"

using namespace quell;

namespace {

std::vector<float> runSplit(aec::ResidualEchoSuppressor& s, const std::vector<float>& mic, const std::vector<float>& err,
                            const std::vector<float>& far, std::uint32_t seed)
{
    std::vector<float> out(mic.size());
    std::mt19937 rng(seed);
    for (std::size_t pos = 0; pos < mic.size();) {
        const std::size_t n = std::min(mic.size() - pos, std::uniform_int_distribution<std::size_t>(1, 700)(rng));
        s.process(std::span(mic).subspan(pos, n), std::span(err).subspan(pos, n), std::span(far).subspan(pos, n),
                  std::span(out).subspan(pos, n));
        pos += n;
    }
    return out;
}

// Echo in bursts of 0.25 s (white noise, amplitude 0.1) and steady noise; the linear filter is taken to
// have removed 90 % of the echo's amplitude: error = 0.1 echo + noise, mic = echo + noise; the far end is
// the echo itself (an echo path of one tap).
struct BurstScene {
    std::vector<float> mic, err, far;
    std::vector<bool> burst;
    double noisePower = 0.0;
};

BurstScene burstScene(int rate, double seconds, double noiseAmplitude)
{
    const std::size_t n = static_cast<std::size_t>(seconds * rate);
    const auto echo = test::whiteNoise(n, 11, 0.1);
    const auto noise = test::whiteNoise(n, 12, noiseAmplitude);
    BurstScene s;
    s.mic.resize(n);
    s.err.resize(n);
    s.far.resize(n);
    s.burst.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const bool on = (i / static_cast<std::size_t>(rate / 4)) % 2 == 1;
        const double e = on ? echo[i] : 0.0;
        s.mic[i] = static_cast<float>(e + noise[i]);
        s.err[i] = static_cast<float>(0.1 * e + noise[i]);
        s.far[i] = static_cast<float>(e);
        s.burst[i] = on;
    }
    s.noisePower = noiseAmplitude * noiseAmplitude;   // Gaussian, standard deviation a
    return s;
}

// Mean power of x[i + latency] over the samples i of the last half where `want` says so, 20 ms away from
// a burst edge.
double powerWhere(const std::vector<float>& x, const BurstScene& s, int latency, bool want, int rate)
{
    const std::size_t guard = static_cast<std::size_t>(rate / 50);
    double p = 0.0;
    std::size_t count = 0;
    for (std::size_t i = s.mic.size() / 2; i + static_cast<std::size_t>(latency) < x.size(); ++i) {
        if (s.burst[i] != want || s.burst[i - guard] != want || (i + guard < s.burst.size() && s.burst[i + guard] != want))
            continue;
        const double v = x[i + static_cast<std::size_t>(latency)];
        p += v * v;
        ++count;
    }
    return p / static_cast<double>(count);
}

// The frames a suppressor with `settings` replaced by the microphone's over the whole scene.
long fallbackFrames(const aec::SuppressorSettings& settings, int rate, const std::vector<float>& mic, const std::vector<float>& err,
                    const std::vector<float>& far)
{
    aec::ResidualEchoSuppressor sup;
    sup.prepare(settings, {.sampleRate = rate});
    runSplit(sup, mic, err, far, 6);
    return sup.fallbackFrames();
}

} // namespace

TEST_CASE("The residual echo suppressor is transparent without an echo estimate, delayed by its latency", "[aec][suppressor]")
{
    for (const int rate : {8000, 16000, 48000}) {
        aec::ResidualEchoSuppressor s;
        s.prepare({}, {.sampleRate = rate});
        INFO("rate " << rate << " frame " << s.frameSize());
        CHECK(s.latencySamples() == s.frameSize() - 1);
        const auto xd = test::whiteNoise(static_cast<std::size_t>(rate), 3, 0.5);
        std::vector<float> x(xd.begin(), xd.end());
        // mic == error and a silent far end: the linear filter estimated no echo and nothing was played,
        // so there is nothing to suppress.
        const std::vector<float> silent(x.size(), 0.0f);
        const auto out = runSplit(s, x, x, silent, 1);
        const std::size_t L = static_cast<std::size_t>(s.latencySamples());
        for (std::size_t i = 0; i < L; ++i)
            REQUIRE(std::fabs(out[i]) < 1e-6f);
        double maxErr = 0.0;
        for (std::size_t i = L; i < x.size(); ++i)
            maxErr = std::max(maxErr, static_cast<double>(std::fabs(out[i] - x[i - L])));
        CHECK(maxErr < 2e-6);
        CHECK(s.lastMeanGain() == 1.0f);
    }
}

TEST_CASE("The residual echo suppressor's output does not depend on the block split", "[aec][suppressor]")
{
    const BurstScene scene = burstScene(16000, 3.0, 0.003);
    aec::ResidualEchoSuppressor a, b;
    a.prepare({}, {.sampleRate = 16000});
    b.prepare({}, {.sampleRate = 16000});
    const auto outA = runSplit(a, scene.mic, scene.err, scene.far, 1);
    const auto outB = runSplit(b, scene.mic, scene.err, scene.far, 2);
    CHECK(outA == outB);
    // In place (out aliasing the error) gives the same samples too.
    aec::ResidualEchoSuppressor c;
    c.prepare({}, {.sampleRate = 16000});
    std::vector<float> inPlace = scene.err;
    c.process(scene.mic, inPlace, scene.far, inPlace);
    CHECK(inPlace == outA);
}

TEST_CASE("The residual echo suppressor removes a residual that follows the echo estimate", "[aec][suppressor]")
{
    const int rate = 16000;
    const BurstScene scene = burstScene(rate, 6.0, 0.003);
    aec::SuppressorSettings settings;
    settings.comfortNoise = false;
    // 12 dB at most, and no widened far-end margin for a weak filter (this one reaches 20 dB): the residual
    // stops dead at the end of a burst, where the model (a room's reverberant tail) still expects some;
    // the noise left in the gaps is checked against that bound.
    settings.maxAttenuationDb = 12.0;
    settings.weakFilterMarginDb = 0.0;
    aec::ResidualEchoSuppressor s;
    s.prepare(settings, {.sampleRate = rate});
    const auto out = runSplit(s, scene.mic, scene.err, scene.far, 3);
    const int L = s.latencySamples();
    const double errorInBursts = powerWhere(scene.err, scene, 0, true, rate);
    const double outInBursts = powerWhere(out, scene, L, true, rate);
    const double outInGaps = powerWhere(out, scene, L, false, rate);
    INFO("leak " << s.leakDb() << " dB; error " << 10 * std::log10(errorInBursts) << " dB, out " << 10 * std::log10(outInBursts)
                 << " dB in bursts; noise " << 10 * std::log10(scene.noisePower) << " dB, out " << 10 * std::log10(outInGaps) << " dB in gaps");
    // The residual (0.1 echo) is 9.6 dB above the noise: 12 dB of attenuation at most takes the burst
    // output down by more than 6 dB.
    CHECK(10.0 * std::log10(errorInBursts / outInBursts) > 6.0);
    // Between bursts the echo estimate's reverberant tail dies away (0.3 s assumed) and the noise
    // passes: at most a little of it is taken in the first part of a gap.
    CHECK(outInGaps > 0.7 * scene.noisePower);
    CHECK(outInGaps < 1.05 * scene.noisePower);
    // The measured leak is the residual's ratio to the (reverberant) echo estimate: -20 dB and below.
    CHECK(s.leakDb() < -15.0);
    CHECK(s.leakDb() > -40.0);

    // No attenuation allowed: the output is the error, delayed.
    aec::ResidualEchoSuppressor off;
    settings.maxAttenuationDb = 0.0;
    off.prepare(settings, {.sampleRate = rate});
    const auto passed = runSplit(off, scene.mic, scene.err, scene.far, 4);
    double maxErr = 0.0;
    for (std::size_t i = static_cast<std::size_t>(L); i < passed.size(); ++i)
        maxErr = std::max(maxErr, static_cast<double>(std::fabs(passed[i] - scene.err[i - static_cast<std::size_t>(L)])));
    CHECK(maxErr < 1e-6);
}

TEST_CASE("The suppressor's held linear reach falls fast after an echo-path change, not in double talk", "[aec][suppressor]")
{
    // A far end whose level moves like syllables (white noise under |sin| at 2 Hz), a one-tap echo of it,
    // and a linear filter that removed 30 dB of it for 4 s. Then 1.5 s of either an echo-path change (the
    // filter removes nothing: the output is the echo, following the far end) or double talk (the filter
    // still removes 30 dB; a near end as loud as the echo, moving at its own pace, fills the output).
    const int rate = 16000;
    const std::size_t before = 4 * static_cast<std::size_t>(rate), after = 5 * static_cast<std::size_t>(rate) / 2;
    const std::size_t n = before + after;
    const auto carrier = test::whiteNoise(n, 31, 0.1);
    const auto talker = test::whiteNoise(n, 32, 0.1);
    const auto noise = test::whiteNoise(n, 33, 0.0001);
    const double pi = 3.14159265358979;
    std::vector<float> far(n), micAlone(n), micBoth(n), changed(n), doubleTalk(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double t = static_cast<double>(i) / rate;
        const double echo = carrier[i] * (0.1 + std::fabs(std::sin(2.0 * pi * t)));
        const double near = i < before ? 0.0 : talker[i] * (0.1 + std::fabs(std::sin(2.0 * pi * 1.37 * t + 1.0)));
        far[i] = static_cast<float>(echo);
        micAlone[i] = static_cast<float>(echo + noise[i]);
        micBoth[i] = static_cast<float>(echo + near + noise[i]);
        changed[i] = static_cast<float>((i < before ? 0.03 * echo : echo) + noise[i]);
        doubleTalk[i] = static_cast<float>(0.03 * echo + near + noise[i]);
    }
    aec::SuppressorSettings settings;
    settings.comfortNoise = false;
    // The reach after `samples`, with the canceller's path-change verdict (below) 0.1 s after the change
    // where asked: its detector's pace. The call is split there either way (the output does not depend on
    // the split).
    const std::size_t verdict = before + static_cast<std::size_t>(rate / 10);
    auto reachOf = [&](const aec::SuppressorSettings& set, const std::vector<float>& mic, const std::vector<float>& err, std::size_t samples,
                       bool withVerdict) {
        aec::ResidualEchoSuppressor s;
        s.prepare(set, {.sampleRate = rate});
        std::vector<float> out(samples);
        const std::size_t first = std::min(verdict, samples);
        s.process(std::span(mic).first(first), std::span(err).first(first), std::span(far).first(first), std::span(out).first(first));
        if (withVerdict)
            s.echoPathChanged();
        const std::size_t rest = samples - first;
        s.process(std::span(mic).subspan(first, rest), std::span(err).subspan(first, rest), std::span(far).subspan(first, rest),
                  std::span(out).subspan(first, rest));
        return s.linearReachDb();
    };
    auto reachAfter = [&](const std::vector<float>& mic, const std::vector<float>& err, std::size_t samples) {
        return reachOf(settings, mic, err, samples, false);
    };
    const double converged = reachAfter(micAlone, changed, before);
    const double afterChange = reachAfter(micAlone, changed, n), inDoubleTalk = reachAfter(micBoth, doubleTalk, n);
    INFO("reach: converged " << converged << " dB, after the change " << afterChange << " dB, in double talk "
                             << inDoubleTalk << " dB");
    CHECK(converged > 25.0);
    // Held, the reach falls by 2 dB/s: 5 dB in 2.5 s. After the change it falls at 20 dB/s once the
    // output's correlation with the far end, over 2 s, has passed 0.4 (here after about 1 s).
    CHECK(inDoubleTalk > converged - 6.0);
    CHECK(afterChange < converged - 20.0);

    // The canceller's path-change verdict makes the reach fall within half a second of the change, where
    // on the correlation alone it still stands; the same verdict in double talk (the detector fires there
    // too) changes nothing. The verdict counts only for a filter the suppressor trusts
    // (confidentFilterDb, lowered here to this scene's 31 dB reach), and not at all for one it does not.
    const std::size_t soon = before + static_cast<std::size_t>(rate / 2);
    aec::SuppressorSettings trusting = settings;
    trusting.confidentFilterDb = 25.0;
    // This scene's output follows the far end's model with a mean correlation of 0.25 to 0.3 in the half
    // second after the change: under the default 0.3, which the corpus's speech path change passes.
    trusting.pathChangeCorrelation = 0.25;
    const double soonAlone = reachOf(trusting, micAlone, changed, soon, false), soonWithVerdict = reachOf(trusting, micAlone, changed, soon, true);
    const double doubleTalkAlone = reachOf(trusting, micBoth, doubleTalk, n, false), doubleTalkWithVerdict = reachOf(trusting, micBoth, doubleTalk, n, true);
    const double soonUntrusted = reachOf(settings, micAlone, changed, soon, true), soonUntrustedAlone = reachOf(settings, micAlone, changed, soon, false);
    INFO("half a second after the change: " << soonAlone << " dB without the verdict, " << soonWithVerdict << " dB with it, "
                                            << soonUntrusted << " dB with it where the filter is not trusted; double talk "
                                            << doubleTalkAlone << " dB without a verdict, " << doubleTalkWithVerdict << " dB with one");
    CHECK(soonAlone > converged - 10.0);
    CHECK(soonWithVerdict < converged - 20.0);
    CHECK(soonUntrusted == Approx(soonUntrustedAlone).margin(1e-9));
    CHECK(doubleTalkAlone > converged - 6.0);
    CHECK(doubleTalkWithVerdict == Approx(doubleTalkAlone).margin(1e-9));
}

TEST_CASE("The suppressor takes an echo burst that follows the far end, and keeps a near end's onset", "[aec][suppressor]")
{
    // A far end of low sounds only (white noise under a one-pole low-pass at about 300 Hz), moving like
    // syllables, a one-tap echo of it, a linear filter that removed 30 dB of it for 4 s. Then, after a
    // pause of 0.3 s, a new far-end talker with highs too, and 0.3 s of either an echo burst (the filter,
    // which never heard the highs, removes 30 dB of the lows and nothing of the highs: a new talker's
    // paths) or a near end's onset (the filter removes 30 dB of all of the echo; a near end 6 dB under it,
    // moving at its own pace, fills the output). And a near end's onset under a far end that talks on, highs
    // and all, without a pause.
    const int rate = 16000;
    const std::size_t pause = 3 * static_cast<std::size_t>(rate) / 10;
    const std::size_t before = 4 * static_cast<std::size_t>(rate) + pause, burst = 3 * static_cast<std::size_t>(rate) / 10;
    const std::size_t n = before + burst;
    const auto carrier = test::whiteNoise(n, 41, 0.1);
    const auto talker = test::whiteNoise(n, 42, 0.05);
    const auto noise = test::whiteNoise(n, 43, 0.0001);
    const double pi = 3.14159265358979;
    struct Scene {
        std::vector<float> far, mic, err;
    };
    auto scene = [&](bool newTalker, bool nearEnd) {
        Scene sc{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
        double low = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            const double t = static_cast<double>(i) / rate;
            low = 0.9 * low + 0.1 * carrier[i];
            const double high = i > 0 ? 0.5 * (carrier[i] - carrier[i - 1]) : 0.0;
            const bool after = i >= before, paused = newTalker && i >= before - pause && !after;
            const double level = paused ? 0.0 : 0.1 + std::fabs(std::sin(2.0 * pi * (after && newTalker ? 1.6 : 1.0) * t));
            const double lowEcho = 3.0 * low * level, highEcho = after || !newTalker ? high * level : 0.0, echo = lowEcho + highEcho;
            const double near = after && nearEnd ? talker[i] * (0.1 + std::fabs(std::sin(2.0 * pi * 1.37 * t + 1.0))) : 0.0;
            sc.far[i] = static_cast<float>(echo);
            sc.mic[i] = static_cast<float>(echo + near + noise[i]);
            sc.err[i] = static_cast<float>(nearEnd ? 0.03 * echo + near + noise[i] : 0.03 * lowEcho + highEcho + noise[i]);
        }
        return sc;
    };
    struct Run {
        double keptDb;   // output over the linear output from 0.1 s into the burst on, in dB
        long frames;     // frames taken for an echo burst
    };
    auto run = [&](bool echoBurst, const Scene& sc) {
        aec::SuppressorSettings settings;
        settings.comfortNoise = false;
        settings.echoBurst = echoBurst;
        aec::ResidualEchoSuppressor s;
        s.prepare(settings, {.sampleRate = rate});
        std::vector<float> out(n);
        s.process(sc.mic, sc.err, sc.far, out);
        const std::size_t latency = static_cast<std::size_t>(s.latencySamples());
        double pOut = 0.0, pErr = 0.0;
        for (std::size_t i = before + static_cast<std::size_t>(rate / 10); i + latency < n; ++i) {
            pOut += static_cast<double>(out[i + latency]) * out[i + latency];
            pErr += static_cast<double>(sc.err[i]) * sc.err[i];
        }
        return Run{10.0 * std::log10(pOut / pErr), s.echoBurstFrames()};
    };
    const Scene burstScene = scene(true, false), nearGoingOn = scene(false, true), nearWithNewTalker = scene(true, true);
    const Run burstOn = run(true, burstScene), burstOff = run(false, burstScene);
    const Run nearOn = run(true, nearGoingOn), nearOff = run(false, nearGoingOn);
    const Run bothOn = run(true, nearWithNewTalker), bothOff = run(false, nearWithNewTalker);
    INFO("echo burst: " << burstOn.keptDb << " dB kept (" << burstOn.frames << " frames taken), without the rule " << burstOff.keptDb
                        << " dB; a near end's onset: " << nearOn.keptDb << " dB (" << nearOn.frames << " frames), without the rule "
                        << nearOff.keptDb << " dB; at a new far-end talker's onset: " << bothOn.keptDb << " dB (" << bothOn.frames
                        << " frames), without the rule " << bothOff.keptDb << " dB");
    CHECK(burstOn.frames > 25);
    CHECK(burstOn.keptDb < -15.0);
    CHECK(burstOff.frames == 0);
    CHECK(burstOff.keptDb > -3.0);
    CHECK(nearOn.frames == 0);
    CHECK(nearOn.keptDb == Approx(nearOff.keptDb).margin(1e-9));
    CHECK(nearOn.keptDb > -1.0);
    // Where a near end starts at the same moment as a new far-end talker after a pause, the output's and
    // the far end's band powers rise together: with the band powers' correlation unweighted the rule took
    // the first 100 to 200 ms of the near end's onset for a burst (41 frames, 2.7 dB of its first 0.3 s);
    // weighted by the output's power (BandFollowing) it takes none, with the coherence witness or without.
    CHECK(bothOn.frames == 0);
    CHECK(bothOn.keptDb > -1.0);
}

TEST_CASE("The echo-burst rule keeps a near end whose level moves with the far end's", "[aec][suppressor]")
{
    // The front ends' scene (Tests/support/FrontEndScene.h): a far end and, in the last 2 s, a near end as
    // loud as the echo, both coloured noise under one and the same amplitude envelope; a linear filter
    // that removes 30 dB of the echo. The near end's onset drops the filter's reduction from 30 dB to a
    // few, and its band powers follow the far end's as an echo's would: without the coherence witness the
    // rule took it for a burst (the PipeWire SPA and LV2 tests at 48 kHz lost 11.5 and 12.2 dB of it). It
    // has no phase in common with the linear filter's echo estimate.
    const int rate = 16000;
    const test::FrontEndScene scene = test::frontEndScene(rate, 41);
    const std::size_t n = scene.mic.size();
    std::vector<float> err(n);
    for (std::size_t i = 0; i < n; ++i)
        err[i] = 0.03f * (scene.mic[i] - scene.near[i]) + scene.near[i];
    struct Run {
        double keptDb;
        long frames;
    };
    auto run = [&](bool echoBurst, double coherence) {
        aec::SuppressorSettings settings;
        settings.comfortNoise = false;
        settings.echoBurst = echoBurst;
        settings.echoBurstCoherence = coherence;
        aec::ResidualEchoSuppressor s;
        s.prepare(settings, {.sampleRate = rate});
        std::vector<float> out(n);
        s.process(scene.mic, err, scene.far, out);
        // The output as the near end's, latency removed.
        std::vector<float> aligned(n, 0.0f);
        const std::size_t latency = static_cast<std::size_t>(s.latencySamples());
        std::copy(out.begin() + static_cast<std::ptrdiff_t>(latency), out.end(), aligned.begin());
        return Run{scene.nearEndKeptDb(aligned), s.echoBurstFrames()};
    };
    const double witness = aec::SuppressorSettings{}.echoBurstCoherence;
    const Run on = run(true, witness), off = run(false, witness), noWitness = run(true, 0.0);
    INFO("near end kept: " << on.keptDb << " dB (" << on.frames << " frames taken), without the rule " << off.keptDb
                           << " dB, without the coherence witness " << noWitness.keptDb << " dB (" << noWitness.frames << " frames)");
    CHECK(aec::SuppressorSettings{}.echoBurst);
    CHECK(witness > 0.0);
    CHECK(noWitness.frames > 10);
    CHECK(noWitness.keptDb < off.keptDb - 3.0);
    CHECK(on.frames == 0);
    CHECK(on.keptDb == Approx(off.keptDb).margin(1e-9));
    CHECK(std::abs(on.keptDb) < 1.0);
}

TEST_CASE("The suppressor takes the room's tail beyond the linear filter's taps, and keeps a near end", "[aec][suppressor]")
{
    // A room of RT60 0.4 s (a direct path and a diffuse tail 20 dB below it beyond 64 ms) and a linear
    // filter of 1024 taps (64 ms) that models the first 1024 taps exactly: its output is the tail beyond
    // them. The far end moves like syllables; 2.5 s of a near end as loud as the echo close the scene.
    const int rate = 16000, filterTaps = 1024;
    const std::size_t roomTaps = 6400, single = 6 * static_cast<std::size_t>(rate), n = single + 5 * static_cast<std::size_t>(rate) / 2;
    std::vector<double> room = test::whiteNoise(roomTaps, 41, 0.014);
    room[0] = 1.0;
    for (std::size_t t = 1; t < roomTaps; ++t)
        room[t] *= std::pow(10.0, -3.0 * static_cast<double>(t) / (0.4 * rate));
    std::vector<double> beyondTaps(roomTaps, 0.0);
    std::copy(room.begin() + filterTaps, room.end(), beyondTaps.begin() + filterTaps);
    const auto carrier = test::whiteNoise(n, 42, 0.1);
    const auto talker = test::whiteNoise(n, 43, 0.1);
    const auto noise = test::whiteNoise(n, 44, 0.0001);
    const double pi = 3.14159265358979;
    std::vector<double> farD(n), nearD(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double t = static_cast<double>(i) / rate;
        // Syllables with pauses: the tail shows in the pauses.
        farD[i] = carrier[i] * std::max(0.0, std::sin(2.0 * pi * 2.0 * t));
        nearD[i] = i < single ? 0.0 : talker[i] * (0.1 + std::fabs(std::sin(2.0 * pi * 1.37 * t + 1.0)));
    }
    const auto echo = test::convolve(farD, room), tail = test::convolve(farD, beyondTaps);
    std::vector<float> far(n), mic(n), err(n);
    for (std::size_t i = 0; i < n; ++i) {
        far[i] = static_cast<float>(farD[i]);
        mic[i] = static_cast<float>(echo[i] + nearD[i] + noise[i]);
        err[i] = static_cast<float>(tail[i] + nearD[i] + noise[i]);
    }
    aec::SuppressorSettings settings;
    settings.comfortNoise = false;
    auto run = [&](int filterSamples) {
        aec::ResidualEchoSuppressor s;
        s.prepare(settings, {.sampleRate = rate}, filterSamples);
        std::vector<float> out(n);
        s.process(mic, err, far, out);
        // Output powers over the last 2 s of far-end single talk and over double talk (after 0.5 s).
        const std::size_t L = static_cast<std::size_t>(s.latencySamples());
        double pSingle = 0.0, pDouble = 0.0, pNear = 0.0;
        for (std::size_t i = single - 2 * rate; i < single; ++i)
            pSingle += static_cast<double>(out[i + L]) * out[i + L];
        for (std::size_t i = single + rate / 2; i + L < n; ++i) {
            pDouble += static_cast<double>(out[i + L]) * out[i + L];
            pNear += nearD[i] * nearD[i];
        }
        return std::array<double, 3>{pSingle, pDouble, pNear};
    };
    double errSingle = 0.0;
    for (std::size_t i = single - 2 * rate; i < single; ++i)
        errSingle += static_cast<double>(err[i]) * err[i];
    const auto without = run(0), with = run(filterTaps);
    INFO("far-end single talk: error " << 10 * std::log10(errSingle) << " dB, out without the tail model "
                                       << 10 * std::log10(without[0]) << " dB, with " << 10 * std::log10(with[0])
                                       << " dB; double talk: near end " << 10 * std::log10(with[2]) << " dB, out without "
                                       << 10 * std::log10(without[1]) << " dB, with " << 10 * std::log10(with[1]) << " dB");
    // The tail, which the far-end models do not follow, is taken: at least 6 dB more than without.
    CHECK(10.0 * std::log10(without[0] / with[0]) > 6.0);
    // The near end passes: within 1 dB of its own power in double talk (the tail is 20 dB below it).
    CHECK(with[1] > std::pow(10.0, -0.1) * with[2]);

    // A headset: the near end alone, no echo, and a far end of line noise at -60 dBFS. The talker starts
    // a filter length after the line, where the tail model's history steps from silence to the line's
    // noise: its output follows that step. No linear reach, no tail: the output is the microphone, delayed.
    const auto line = test::whiteNoise(n, 45, 0.001);
    std::vector<float> headset(n), lineFar(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double t = static_cast<double>(i) / rate;
        const double talking = i < static_cast<std::size_t>(filterTaps) ? 0.0 : std::max(0.0, std::sin(2.0 * pi * 1.37 * t));
        headset[i] = static_cast<float>(talker[i] * talking + noise[i]);
        lineFar[i] = static_cast<float>(line[i]);
    }
    aec::ResidualEchoSuppressor s;
    s.prepare(settings, {.sampleRate = rate}, filterTaps);
    std::vector<float> out(n);
    s.process(headset, headset, lineFar, out);
    const std::size_t L = static_cast<std::size_t>(s.latencySamples());
    double worst = 0.0;
    for (std::size_t i = 0; i + L < n; ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(out[i + L] - headset[i])));
    INFO("headset: largest change " << worst);
    CHECK(worst < 1e-5);
}

TEST_CASE("Comfort noise fills what the suppressor takes away with noise at the floor's level", "[aec][suppressor]")
{
    const int rate = 16000;
    const BurstScene scene = burstScene(rate, 6.0, 0.003);
    aec::SuppressorSettings settings;
    settings.maxAttenuationDb = 40.0;
    double burstPower[2] = {}, gapPower[2] = {};
    for (const bool comfort : {false, true}) {
        settings.comfortNoise = comfort;
        aec::ResidualEchoSuppressor s;
        s.prepare(settings, {.sampleRate = rate});
        const auto out = runSplit(s, scene.mic, scene.err, scene.far, 5);
        burstPower[comfort] = powerWhere(out, scene, s.latencySamples(), true, rate);
        gapPower[comfort] = powerWhere(out, scene, s.latencySamples(), false, rate);
    }
    const double errorInBursts = powerWhere(scene.err, scene, 0, true, rate);
    INFO("noise " << 10 * std::log10(scene.noisePower) << " dB; error in bursts " << 10 * std::log10(errorInBursts)
                  << " dB; bursts without comfort noise " << 10 * std::log10(burstPower[0]) << " dB, with "
                  << 10 * std::log10(burstPower[1]) << " dB; gaps " << 10 * std::log10(gapPower[0]) << " / "
                  << 10 * std::log10(gapPower[1]) << " dB");
    // With it, what was taken comes back as noise of about the floor's power: more than a third of the
    // floor is added in the bursts, and the output there stays well below the unsuppressed error.
    CHECK(burstPower[1] - burstPower[0] > 0.3 * scene.noisePower);
    CHECK(burstPower[1] < 0.5 * errorInBursts);
    // Where the gains recover, the comfort noise keeps the level at the floor (within 1.5 dB).
    CHECK(gapPower[1] > gapPower[0]);
    CHECK(gapPower[1] == Approx(scene.noisePower).epsilon(0.41));
}

TEST_CASE("The suppressor keeps a good output that is louder than the microphone in double talk", "[aec][suppressor]")
{
    // A filter that cancels 40 dB, and from 1 s a near end independent of the echo: tones 15 Hz apart
    // (200 and 215 Hz, the echo 7 dB under the near end), which beat in the air as voices' harmonics do.
    // Near the beat's troughs the microphone is up to 5 dB quieter than the output over an 8 ms frame, and
    // the output is the near end and nothing more. It must come through whole; the 3 dB rule the
    // suppressor had before for every frame played the microphone's echo in those frames, which this test
    // shows too.
    const int rate = 16000;
    const std::size_t n = static_cast<std::size_t>(3 * rate), start = static_cast<std::size_t>(rate);
    const auto noise = test::whiteNoise(n, 23, 1e-4);
    std::vector<float> mic(n), err(n), far(n), nearPart(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double t = static_cast<double>(i) / rate, pi = 3.141592653589793;
        const double s = i >= start ? 0.1 * std::sin(2.0 * pi * 200.0 * t) : 0.0, y = 0.045 * std::sin(2.0 * pi * 215.0 * t + 1.0);
        mic[i] = static_cast<float>(s + y + noise[i]);
        err[i] = static_cast<float>(s + 0.01 * y + noise[i]);
        far[i] = static_cast<float>(y);
        nearPart[i] = static_cast<float>(s);
    }
    std::size_t louder = 0;   // 8 ms frames of the double talk whose output is more than 3 dB over the microphone's
    for (std::size_t f = start; f + 128 <= n; f += 128) {
        double pe = 0.0, pd = 0.0;
        for (std::size_t i = f; i < f + 128; ++i) {
            pe += double(err[i]) * err[i];
            pd += double(mic[i]) * mic[i];
        }
        louder += pe > 2.0 * pd ? 1 : 0;
    }
    INFO("frames louder than the microphone by 3 dB: " << louder);
    REQUIRE(louder >= 20);
    auto run = [&](const aec::SuppressorSettings& settings, const std::vector<float>& linear) {
        aec::ResidualEchoSuppressor sup;
        sup.prepare(settings, {.sampleRate = rate});
        auto out = runSplit(sup, mic, linear, far, 5);
        return std::make_pair(std::move(out), sup.fallbackFrames());
    };
    aec::SuppressorSettings settings;
    settings.comfortNoise = false;
    const auto [out, fallbacks] = run(settings, err);
    CHECK(fallbacks == 0);
    // The near end kept: the output against the near end delayed by the latency, over the double talk.
    aec::ResidualEchoSuppressor probe;
    probe.prepare(settings, {.sampleRate = rate});
    const std::size_t latency = static_cast<std::size_t>(probe.latencySamples());
    double nearPower = 0.0, errorPower = 0.0;
    for (std::size_t i = start + static_cast<std::size_t>(rate / 4); i + latency < n; ++i) {
        const double d = out[i + latency] - nearPart[i];
        nearPower += double(nearPart[i]) * nearPart[i];
        errorPower += d * d;
    }
    const double keptDb = 10.0 * std::log10(nearPower / errorPower);
    INFO("near end over what differs from it: " << keptDb << " dB");
    CHECK(keptDb > 25.0);
    aec::SuppressorSettings before = settings;
    before.fallbackNearEndDb = before.fallbackDb;
    CHECK(run(before, err).second >= 20);
}

TEST_CASE("The suppressor falls back at 3 dB on an output that is the echo estimate's sound", "[aec][suppressor]")
{
    // No near end; a stale filter whose estimate is the echo's opposite, so the output is 1.8 x the echo:
    // 5.1 dB over the microphone, far over the noise, and coherent with the echo estimate. Every frame
    // falls back. Were the output's coherence not asked (fallbackCoherence 1: nearly every frame counts as a
    // near end's), the 6 dB of a near end's frames would let it through. (The output's height over the noise
    // floor, the rule's other condition, is set to hold in every frame: the floor tracker follows this
    // echo's quiet moments.)
    const int rate = 16000;
    const std::size_t n = static_cast<std::size_t>(2 * rate);
    const auto echo = test::colouredNoise(n, 31, 0.1), noise = test::whiteNoise(n, 32, 1e-4);
    std::vector<float> mic(n), err(n), far(n);
    for (std::size_t i = 0; i < n; ++i) {
        mic[i] = static_cast<float>(echo[i] + noise[i]);
        err[i] = static_cast<float>(1.8 * echo[i] + noise[i]);
        far[i] = static_cast<float>(echo[i]);
    }
    auto fallbacks = [&](const aec::SuppressorSettings& settings) { return fallbackFrames(settings, rate, mic, err, far); };
    aec::SuppressorSettings settings;
    settings.fallbackNearEndAboveFloorDb = -60.0;
    const long frames = static_cast<long>(n / 64);   // hops of 4 ms
    CHECK(fallbacks(settings) > frames * 9 / 10);
    settings.fallbackCoherence = 1.0;
    CHECK(fallbacks(settings) < frames / 4);
}

TEST_CASE("The suppressor falls back at 3 dB on an output a few dB over the noise floor", "[aec][suppressor]")
{
    // No near end: the microphone hears the room's noise, and now and then for 8 ms the filter's estimate
    // is the noise's opposite, so the output is 1.6 x the noise there (4.1 dB over the microphone). Such
    // moments are rare enough that the output is mostly not coherent with the echo estimate over 150 ms, but the
    // output stands only 4 dB over the noise floor: no near end talks, and each of them falls back. With
    // the floor's condition left out (fallbackNearEndAboveFloorDb -60), the near end's 6 dB keeps half of
    // them (the others' frames are coherent enough with the estimate to fall back at 3 dB anyway).
    const int rate = 16000;
    const std::size_t n = static_cast<std::size_t>(3 * rate), period = 8000, burst = 128;
    const auto noise = test::whiteNoise(n, 41, 1e-3), echo = test::colouredNoise(n, 42, 1e-4);
    std::vector<float> mic(n), err(n), far(n);
    std::size_t bursts = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const bool on = i >= static_cast<std::size_t>(rate) && i % period < burst;
        bursts += on && i % period == 0 ? 1 : 0;
        mic[i] = static_cast<float>(noise[i]);
        err[i] = static_cast<float>((on ? 1.6 : 1.0) * noise[i]);
        far[i] = static_cast<float>(echo[i]);
    }
    REQUIRE(bursts == 4);
    auto fallbacks = [&](const aec::SuppressorSettings& settings) { return fallbackFrames(settings, rate, mic, err, far); };
    aec::SuppressorSettings settings;
    const long kept = fallbacks(settings);
    settings.fallbackNearEndAboveFloorDb = -60.0;
    const long withoutFloor = fallbacks(settings);
    INFO("frames fallen back: " << kept << ", without the floor's condition " << withoutFloor);
    CHECK(kept >= static_cast<long>(bursts));   // every burst (a frame or more each)
    CHECK(withoutFloor < kept);
}

TEST_CASE("The residual echo suppressor refuses bad settings", "[aec][suppressor]")
{
    aec::ResidualEchoSuppressor s;
    aec::SuppressorSettings bad;
    bad.frameSeconds = 0.0;
    CHECK_THROWS_AS(s.prepare(bad, {.sampleRate = 16000}), std::invalid_argument);
    bad = {};
    bad.overSubtraction = 0.5;
    CHECK_THROWS_AS(s.prepare(bad, {.sampleRate = 16000}), std::invalid_argument);
    bad = {};
    bad.pathChangeCorrelation = 1.5;
    CHECK_THROWS_AS(s.prepare(bad, {.sampleRate = 16000}), std::invalid_argument);
    bad = {};
    bad.pathChangeSeconds = -1.0;
    CHECK_THROWS_AS(s.prepare(bad, {.sampleRate = 16000}), std::invalid_argument);
    bad = {};
    bad.fallbackNearEndDb = bad.fallbackDb - 1.0;
    CHECK_THROWS_AS(s.prepare(bad, {.sampleRate = 16000}), std::invalid_argument);
    bad = {};
    bad.fallbackNearEndDb = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS(s.prepare(bad, {.sampleRate = 16000}), std::invalid_argument);
    for (const double c : {1.5, -0.1, std::numeric_limits<double>::quiet_NaN()}) {
        bad = {};
        bad.fallbackCoherence = c;
        CHECK_THROWS_AS(s.prepare(bad, {.sampleRate = 16000}), std::invalid_argument);
    }
    bad = {};
    bad.fallbackNearEndAboveFloorDb = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(s.prepare(bad, {.sampleRate = 16000}), std::invalid_argument);
    CHECK_THROWS_AS(s.prepare({}, {.sampleRate = 0}), std::invalid_argument);
    s.prepare({}, {.sampleRate = 16000});
    std::vector<float> a(10), b(9);
    CHECK_THROWS_AS(s.process(a, b, a, a), std::invalid_argument);
    CHECK_THROWS_AS(s.process(a, a, b, a), std::invalid_argument);
}
