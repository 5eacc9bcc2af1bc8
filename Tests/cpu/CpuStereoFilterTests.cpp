// SPDX-License-Identifier: GPL-3.0-or-later
// A stereo far end on the CPU (makeCpuStereoFilter, Source/aec/CpuStereoFilter.cpp): the two-channel
// Kalman filter with the fast RLS on the channels' mean beside it, checked against the Kalman filter alone,
// with the two-channel fast RLS leading them, and with a shorter two-channel fast RLS beside it too.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "aec/LinearEchoFilter.h"
#include "support/FilterCallSplit.h"
#include "support/Signals.h"

using namespace quell;

namespace {

constexpr int kTaps = 1024;

struct StereoEcho {
    std::vector<float> x;   // two channels interleaved
    std::vector<float> d;
};

// Far-end channels x0 and x1 through two paths of 400 taps (each loudspeaker's), with white noise 40 dB
// under the echo. sameSignal: x1 = x0 (one signal in both channels); else two independent noises.
StereoEcho makeStereoEcho(std::size_t samples, bool sameSignal, std::uint32_t seed)
{
    const auto x0 = test::whiteNoise(samples, seed, 0.1);
    const auto x1 = sameSignal ? x0 : test::whiteNoise(samples, seed + 1, 0.1);
    const auto e0 = test::convolve(x0, test::randomSystem(400, seed + 2, 80.0));
    const auto e1 = test::convolve(x1, test::randomSystem(400, seed + 3, 80.0));
    std::vector<double> d(samples);
    double echo = 0.0;
    for (std::size_t i = 0; i < samples; ++i) {
        d[i] = e0[i] + e1[i];
        echo += d[i] * d[i];
    }
    const auto noise = test::whiteNoise(samples, seed + 4, std::sqrt(echo / static_cast<double>(samples)) * 0.01);
    StereoEcho c;
    c.x.resize(2 * samples);
    c.d.resize(samples);
    for (std::size_t i = 0; i < samples; ++i) {
        c.x[2 * i] = static_cast<float>(x0[i]);
        c.x[2 * i + 1] = static_cast<float>(x1[i]);
        c.d[i] = static_cast<float>(d[i] + noise[i]);
    }
    return c;
}

dsp::PbfdkfSettings kalmanSettings()
{
    dsp::PbfdkfSettings k;
    k.taps = kTaps;
    k.channels = 2;
    return k;
}

dsp::RlsSettings meanSettings()
{
    dsp::RlsSettings r;
    r.tapsPerChannel = kTaps;
    r.lambda = 1.0 - 1.0 / 10240.0;
    return r;
}

std::vector<float> run(aec::LinearEchoFilter& f, const StereoEcho& c)
{
    std::vector<float> e(c.d.size());
    f.processInterleaved(c.d, c.x, e);
    return e;
}

// The stereo filter and the Kalman filter alone over the same signal.
struct Compared {
    std::unique_ptr<aec::LinearEchoFilter> both = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings());
    std::unique_ptr<aec::LinearEchoFilter> kalman = aec::makeCpuKalmanFilter(kalmanSettings());
    std::vector<float> eBoth, eKalman;
    explicit Compared(const StereoEcho& c) : eBoth(run(*both, c)), eKalman(run(*kalman, c)) {}
};

// Microphone over error energy over [from, to), in dB.
double reductionDb(const StereoEcho& c, const std::vector<float>& e, std::size_t from, std::size_t to)
{
    double mic = 0.0, err = 0.0;
    for (std::size_t i = from; i < to; ++i) {
        mic += double(c.d[i]) * c.d[i];
        err += double(e[i]) * e[i];
    }
    return 10.0 * std::log10(mic / err);
}

} // namespace

TEST_CASE("a stereo far end with one signal in both channels is cancelled as a mono one, by the mean's RLS", "[stereo-filter]")
{
    // The echo is one filter of the mean (the sum of the two paths on the mean, doubled), which the RLS
    // learns within a few filter lengths, at least as fast as from a mono far end; the Kalman filter, which
    // learns the two paths as if the channels could tell them apart, takes longer.
    const StereoEcho c = makeStereoEcho(48000, true, 11u);
    const Compared r(c);
    const double early = reductionDb(c, r.eBoth, 4000, 12000), earlyAlone = reductionDb(c, r.eKalman, 4000, 12000);
    const double late = reductionDb(c, r.eBoth, 32000, 48000), lateAlone = reductionDb(c, r.eKalman, 32000, 48000);
    INFO("echo reduction from 0.25 to 0.75 s: " << early << " dB with the mean's RLS, " << earlyAlone
                                                << " dB by the Kalman filter alone; over the last second " << late << " and " << lateAlone);
    CHECK(early > earlyAlone + 5.0);
    CHECK(late > 38.0);   // the noise is 40 dB under the echo
    CHECK(late > lateAlone);
    // The weights the foreground copies are the mean's filter at half the gain on each channel.
    const std::vector<float> w = r.both->weights();
    REQUIRE(w.size() == 2 * kTaps);
    double energy = 0.0;
    for (std::size_t i = 0; i < kTaps; ++i) {
        CHECK(w[i] == w[kTaps + i]);
        energy += double(w[i]) * w[i];
    }
    CHECK(energy > 0.0);
}

TEST_CASE("a stereo far end of two independent signals is left to the Kalman filter", "[stereo-filter]")
{
    // The mean cannot explain two independent channels through two paths, so the Kalman filter leads and the
    // output is as good as its own.
    const StereoEcho c = makeStereoEcho(64000, false, 12u);
    const Compared r(c);
    const double withMean = reductionDb(c, r.eBoth, 48000, 64000), alone = reductionDb(c, r.eKalman, 48000, 64000);
    INFO("echo reduction over the last second: " << withMean << " dB with the mean's RLS, " << alone << " dB by the Kalman filter alone");
    CHECK(alone > 25.0);
    CHECK(std::abs(withMean - alone) < 0.01);
    const std::vector<float> w = r.both->weights(), wKalman = r.kalman->weights();
    CHECK(w == wKalman);
}

TEST_CASE("the stereo filter's output does not depend on how the signal is split into calls, and it does not allocate",
          "[stereo-filter]")
{
    const StereoEcho c = makeStereoEcho(12000, true, 13u);
    const auto whole = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings());
    const std::vector<float> eWhole = run(*whole, c);

    const auto split = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings());
    const std::vector<float> eSplit = test::processInSplitCalls(*split, c.d, c.x, 2);
    CHECK(test::realtimeViolations().allocations == 0);
    CHECK(test::realtimeViolations().locks == 0);
    CHECK(eSplit == eWhole);
    CHECK(split->weights() == whole->weights());
}

TEST_CASE("the stereo filter refuses one far-end channel and filters that do not fit", "[stereo-filter]")
{
    const auto f = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings());
    CHECK(f->channels() == 2);
    CHECK(f->taps() == kTaps);
    CHECK(f->description().find("beside it the channels' mean through the CPU float64 fast RLS, 1024 taps") != std::string::npos);
    std::vector<float> d(16), x(16), e(16);
    CHECK_THROWS_AS(f->process(d, x, e), std::logic_error);
    CHECK_THROWS_AS(f->processInterleaved(d, x, e), std::invalid_argument);   // one channel's worth of far end
    dsp::PbfdkfSettings mono = kalmanSettings();
    mono.channels = 1;
    CHECK_THROWS_AS(aec::makeCpuStereoFilter(mono, meanSettings()), std::invalid_argument);
    dsp::RlsSettings longer = meanSettings();
    longer.tapsPerChannel = 2 * kTaps;
    CHECK_THROWS_AS(aec::makeCpuStereoFilter(kalmanSettings(), longer), std::invalid_argument);
}

namespace {

dsp::RlsSettings stereoRlsSettings()
{
    dsp::RlsSettings r;
    r.tapsPerChannel = kTaps;
    r.channels = 2;
    r.lambda = 1.0 - 1.0 / 20480.0;   // the automatic memory: 10 x the whole length
    r.delta = 0.01;
    return r;
}

} // namespace

TEST_CASE("with the two-channel fast RLS beside them, two independent signals are cancelled to the noise and its weights lead",
          "[stereo-filter]")
{
    // Exact least squares over both paths: the noise floor (40 dB under the echo) within a second, where the
    // Kalman filter alone is still converging; the fast RLS leads, so its weights are the ones copied.
    const StereoEcho c = makeStereoEcho(64000, false, 14u);
    const auto three = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), stereoRlsSettings());
    const auto rls = aec::makeCpuRlsFilter(stereoRlsSettings());
    const auto kalman = aec::makeCpuKalmanFilter(kalmanSettings());
    const std::vector<float> eThree = run(*three, c), eRls = run(*rls, c), eKalman = run(*kalman, c);
    const double withRls = reductionDb(c, eThree, 48000, 64000), alone = reductionDb(c, eKalman, 48000, 64000);
    const double early = reductionDb(c, eThree, 16000, 32000), earlyAlone = reductionDb(c, eKalman, 16000, 32000);
    INFO("echo reduction over the last second: " << withRls << " dB with the two-channel fast RLS, " << alone
                                                 << " by the Kalman filter alone; over the second second " << early << " and " << earlyAlone);
    CHECK(withRls > 38.0);
    CHECK(withRls > alone);
    CHECK(early > earlyAlone + 3.0);
    CHECK(rls->description() == "CPU float64 fast RLS, 2 far-end channels x 1024 taps");
    CHECK(three->weights() == rls->weights());
    CHECK(three->health().reinitialisations == 0);
}

TEST_CASE("the three stereo filters' output does not depend on how the signal is split into calls, and they do not allocate",
          "[stereo-filter]")
{
    const StereoEcho c = makeStereoEcho(12000, false, 15u);
    const auto whole = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), stereoRlsSettings());
    const std::vector<float> eWhole = run(*whole, c);
    const auto split = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), stereoRlsSettings());
    const std::vector<float> eSplit = test::processInSplitCalls(*split, c.d, c.x, 2);
    CHECK(test::realtimeViolations().allocations == 0);
    CHECK(test::realtimeViolations().locks == 0);
    CHECK(eSplit == eWhole);
    CHECK(split->weights() == whole->weights());
    CHECK_THAT(whole->description(), Catch::StartsWith("CPU float64 fast RLS, 2 far-end channels x 1024 taps, beside it the CPU float32 "
                                                       "frequency-domain Kalman filter")
                                         && Catch::EndsWith("and the channels' mean through the CPU float64 fast RLS, 1024 taps"));
    // The two-channel RLS as long as the Kalman filter, with two channels.
    dsp::RlsSettings shorter = stereoRlsSettings();
    shorter.tapsPerChannel = kTaps / 2;
    CHECK_THROWS_AS(aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), shorter), std::invalid_argument);
    dsp::RlsSettings mono = stereoRlsSettings();
    mono.channels = 1;
    CHECK_THROWS_AS(aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), mono), std::invalid_argument);
}

namespace {

// The shorter two-channel fast RLS beside the long one: half the taps, its own automatic memory.
dsp::RlsSettings halfRlsSettings()
{
    dsp::RlsSettings r = stereoRlsSettings();
    r.tapsPerChannel = kTaps / 2;
    r.lambda = 1.0 - 1.0 / 10240.0;
    return r;
}

// Each channel's weights of `shorter` (channel-major) at the start of that channel's `taps`, zeros after.
std::vector<float> spread(const std::vector<float>& shorter, int taps)
{
    const std::size_t h = shorter.size() / 2, full = static_cast<std::size_t>(taps);
    std::vector<float> w(2 * full, 0.0f);
    for (std::size_t ch = 0; ch < 2; ++ch)
        std::copy_n(shorter.begin() + static_cast<std::ptrdiff_t>(ch * h), h, w.begin() + static_cast<std::ptrdiff_t>(ch * full));
    return w;
}

} // namespace

TEST_CASE("with a shorter two-channel fast RLS beside them, its weights are spread to the full length where it leads", "[stereo-filter]")
{
    // Paths of 400 taps fit the shorter filter. The long one starts from a covariance 10^6 times too small
    // (delta), so over the first seconds it learns slowly and the shorter one leads: the output is its
    // error, and the weights copied are its own, each channel's at the start of that channel's taps.
    const StereoEcho c = makeStereoEcho(32000, false, 16u);
    dsp::RlsSettings slow = stereoRlsSettings();
    slow.delta = 1e4;
    const auto four = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), slow, halfRlsSettings());
    const auto half = aec::makeCpuRlsFilter(halfRlsSettings());
    const auto longAlone = aec::makeCpuRlsFilter(slow);
    const std::vector<float> eFour = run(*four, c), eHalf = run(*half, c), eLong = run(*longAlone, c);
    const double withHalf = reductionDb(c, eFour, 16000, 32000), halfAlone = reductionDb(c, eHalf, 16000, 32000),
                 longOnly = reductionDb(c, eLong, 16000, 32000);
    INFO("echo reduction over the second second: " << withHalf << " dB with the shorter filter beside them, " << halfAlone
                                                   << " by it alone, " << longOnly << " by the slow long filter alone");
    CHECK(longOnly < halfAlone - 10.0);
    CHECK(withHalf > 38.0);
    CHECK(std::abs(withHalf - halfAlone) < 0.5);
    const std::vector<float> w = four->weights();
    REQUIRE(w.size() == 2 * static_cast<std::size_t>(kTaps));
    CHECK(w == spread(half->weights(), kTaps));
    std::vector<float> odd(2 * static_cast<std::size_t>(kTaps) + 1, 1.0f);   // a longer span: the rest zero
    four->copyWeights(odd);
    CHECK(std::vector<float>(odd.begin(), odd.end() - 1) == w);
    CHECK(odd.back() == 0.0f);
    CHECK_THAT(four->description(), Catch::Contains("Kalman filter") && Catch::Contains(", the CPU float64 fast RLS, 2 far-end channels x 512 taps and the "
                                                                                       "channels' mean through the CPU float64 fast RLS, 1024 taps"));
}

TEST_CASE("the four stereo filters' output does not depend on how the signal is split into calls; the shorter one needs the long one",
          "[stereo-filter]")
{
    const StereoEcho c = makeStereoEcho(12000, false, 17u);
    const auto whole = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), stereoRlsSettings(), halfRlsSettings());
    const std::vector<float> eWhole = run(*whole, c);
    const auto split = aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), stereoRlsSettings(), halfRlsSettings());
    const std::vector<float> eSplit = test::processInSplitCalls(*split, c.d, c.x, 2);
    CHECK(test::realtimeViolations().allocations == 0);
    CHECK(test::realtimeViolations().locks == 0);
    CHECK(eSplit == eWhole);
    CHECK(split->weights() == whole->weights());
    CHECK_THROWS_AS(aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), std::nullopt, halfRlsSettings()), std::invalid_argument);
    dsp::RlsSettings longer = halfRlsSettings();
    longer.tapsPerChannel = 2 * kTaps;
    CHECK_THROWS_AS(aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), stereoRlsSettings(), longer), std::invalid_argument);
    dsp::RlsSettings mono = halfRlsSettings();
    mono.channels = 1;
    CHECK_THROWS_AS(aec::makeCpuStereoFilter(kalmanSettings(), meanSettings(), stereoRlsSettings(), mono), std::invalid_argument);
}
