// SPDX-License-Identifier: GPL-3.0-or-later
// LoudspeakerDistortionFilter: the echo of a soft-clipping loudspeaker through a known room is fitted and
// taken off far below the linear filter's residual; with a linear loudspeaker, or nothing to learn from,
// the stage estimates exactly zero (the canceller's output is bit for bit what it was without it). And in
// the canceller: an overdriven loudspeaker in a room the filter covers loses a few dB more echo with
// the stage than without, a linear one is untouched.
#include <catch2/catch.hpp>

#include <cmath>

#include "aec/EchoCanceller.h"
#include "aec/LoudspeakerDistortionFilter.h"
#include "support/Signals.h"

using namespace quell;

namespace {

constexpr int kRate = 16000;
constexpr int kSegment = 160;

std::vector<double> softClip(const std::vector<double>& x, double drive)
{
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        y[i] = drive > 0.0 ? std::tanh(drive * x[i]) / drive : x[i];
    return y;
}

// Signal-to-distortion of y against x's best scaled copy, in dB; c = that scale.
double distortionDb(const std::vector<double>& x, const std::vector<double>& y, double& c)
{
    double xy = 0.0, xx = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        xy += x[i] * y[i];
        xx += x[i] * x[i];
    }
    c = xy / xx;
    double lin = 0.0, dist = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        lin += c * x[i] * c * x[i];
        dist += (y[i] - c * x[i]) * (y[i] - c * x[i]);
    }
    return 10.0 * std::log10(lin / dist);
}

struct StageRun {
    // fitted: out less the fit's linear-estimate term, which a held filter cannot take up (the canceller's
    // adaptive filter does, learning from the microphone less the distortion).
    std::vector<float> linearResidual, out, distortion, fitted;
    bool everActive = false;
    double gainDb = 0.0;
};

// The stage with the linear filter held at weights w: out = mic - distortion - w * x.
StageRun runStage(const std::vector<double>& x, const std::vector<double>& mic, const std::vector<double>& w, bool learn)
{
    aec::DistortionFilterSettings s;
    s.tapsPerChannel = static_cast<int>(w.size());
    s.segmentSamples = kSegment;
    aec::LoudspeakerDistortionFilter stage;
    stage.prepare(s, {.sampleRate = kRate});
    const std::vector<float> ref(x.begin(), x.end()), weights(w.begin(), w.end());
    const auto linear = test::convolve(std::span<const double>(x), std::span<const double>(w));
    StageRun run;
    run.fitted.resize(x.size());
    run.linearResidual.resize(x.size());
    run.out.resize(x.size());
    run.distortion.resize(x.size());
    std::vector<float> micf(mic.begin(), mic.end());
    // Odd pieces inside each segment: the stage must not care how a segment is split.
    const std::size_t pieces[] = {37, 101, 22};
    for (std::size_t pos = 0; pos + kSegment <= x.size(); pos += kSegment) {
        for (std::size_t at = 0, p = 0; at < kSegment; at += pieces[p], ++p) {
            const std::size_t n = std::min<std::size_t>(pieces[p], kSegment - at);
            const std::size_t i0 = pos + at;
            const std::span<float> nl(run.distortion.data() + i0, n);
            stage.estimate(std::span<const float>(ref).subspan(i0, n), weights, nl);
            for (std::size_t i = i0; i < i0 + n; ++i) {
                run.linearResidual[i] = static_cast<float>(mic[i] - linear[i]);
                run.out[i] = static_cast<float>(mic[i] - run.distortion[i] - linear[i]);
            }
            stage.observe(std::span<const float>(micf).subspan(i0, n), std::span<const float>(run.out).subspan(i0, n));
            for (std::size_t i = i0; i < i0 + n; ++i)
                run.fitted[i] = static_cast<float>(run.out[i] - stage.coefficients()[0] * linear[i]);
        }
        stage.segmentEnd(learn, learn);
        run.everActive = run.everActive || stage.active();
    }
    run.gainDb = stage.gainDb();
    return run;
}

double lastSecondsDb(const std::vector<float>& a, const std::vector<float>& b, double seconds)
{
    const std::size_t from = a.size() - static_cast<std::size_t>(seconds * kRate);
    return test::reductionDb(std::span<const float>(a).subspan(from), std::span<const float>(b).subspan(from));
}

} // namespace

TEST_CASE("The distortion stage takes a soft-clipping loudspeaker's echo off a linear filter's residual",
          "[aec][distortion]")
{
    const std::size_t n = 8 * kRate;
    const auto x = test::colouredNoise(n, 11, 0.1);
    const auto h = test::randomSystem(96, 12, 16.0);
    for (const double drive : {3.0, 6.0}) {
        INFO("drive " << drive);
        const auto y = softClip(x, drive);
        double c = 1.0;
        const double sdr = distortionDb(x, y, c);
        INFO("SDR " << sdr << " dB");
        REQUIRE(sdr > 8.0);
        REQUIRE(sdr < 25.0);
        auto mic = test::convolve(std::span<const double>(y), std::span<const double>(h));
        const auto noise = test::whiteNoise(n, 13, 1e-5);
        for (std::size_t i = 0; i < n; ++i)
            mic[i] += noise[i];
        // The linear filter as the canceller's would settle: the room times the clipper's linear gain.
        std::vector<double> w(h);
        for (auto& v : w)
            v *= c;
        const StageRun run = runStage(x, mic, w, true);
        const double gain = lastSecondsDb(run.linearResidual, run.fitted, 3.0);
        INFO("distortion echo taken off: " << gain << " dB; fit " << run.gainDb << " dB");
        CHECK(gain > 12.0);   // 16 and 18 dB when written
        CHECK(run.gainDb > 12.0);
        CHECK(run.everActive);
    }
}

TEST_CASE("With a linear loudspeaker, or no far end to learn from, the distortion stage estimates zero",
          "[aec][distortion]")
{
    const std::size_t n = 6 * kRate;
    const auto x = test::colouredNoise(n, 21, 0.1);
    const auto h = test::randomSystem(64, 22, 12.0);
    auto mic = test::convolve(std::span<const double>(x), std::span<const double>(h));
    const auto noise = test::whiteNoise(n, 23, 1e-3);
    for (std::size_t i = 0; i < n; ++i)
        mic[i] += noise[i];
    SECTION("a linear loudspeaker")
    {
        const StageRun run = runStage(x, mic, h, true);
        CHECK_FALSE(run.everActive);
        CHECK(run.gainDb < 0.5);
        CHECK(std::all_of(run.distortion.begin(), run.distortion.end(), [](float v) { return v == 0.0f; }));
    }
    SECTION("an overdriven one, but never a segment to learn from")
    {
        const StageRun run = runStage(x, test::convolve(std::span<const double>(softClip(x, 12.0)), std::span<const double>(h)), h, false);
        CHECK_FALSE(run.everActive);
        CHECK(std::all_of(run.distortion.begin(), run.distortion.end(), [](float v) { return v == 0.0f; }));
    }
}

TEST_CASE("The distortion stage refuses bad settings and segments overrun", "[aec][distortion]")
{
    aec::LoudspeakerDistortionFilter stage;
    aec::DistortionFilterSettings s;
    s.tapsPerChannel = 0;
    CHECK_THROWS_AS(stage.prepare(s, {}), std::invalid_argument);
    s.tapsPerChannel = 16;
    CHECK_THROWS_AS(stage.prepare(s, {.channels = 0}), std::invalid_argument);
    s.segmentSamples = 10;
    stage.prepare(s, {});
    std::vector<float> ref(11, 0.1f), w(16, 0.0f), nl(11);
    CHECK_THROWS_AS(stage.estimate(ref, w, nl), std::invalid_argument);
    CHECK_THROWS_AS(stage.estimate(std::span<const float>(ref).first(4), std::span<const float>(w).first(8),
                                   std::span<float>(nl).first(4)),
                    std::invalid_argument);
}

namespace {

// The canceller (CPU RLS, no suppressor) over a far end through a loudspeaker clipping at `drive` and a
// room its filter covers; the output's echo reduction over the last three seconds, and the output.
double cancellerReductionDb(double drive, bool stage, std::vector<float>* output = nullptr)
{
    const std::size_t n = 10 * kRate;
    const auto x = test::colouredNoise(n, 31, 0.1);
    const auto h = test::randomSystem(160, 32, 24.0);
    auto mic = test::convolve(std::span<const double>(softClip(x, drive)), std::span<const double>(h));
    const auto noise = test::whiteNoise(n, 33, 1e-4);
    for (std::size_t i = 0; i < n; ++i)
        mic[i] += noise[i];
    aec::EchoCancellerSettings s;
    s.taps = 256;
    s.backend = aec::Backend::Cpu;
    s.cpuThreads = 1;
    s.maxDelaySeconds = 0.0;
    s.suppressor.enabled = false;
    s.distortionFilter = stage;
    aec::EchoCanceller canceller;
    canceller.prepare(s, {.maximumBlockSize = 256});
    const std::vector<float> micf(mic.begin(), mic.end()), ref(x.begin(), x.end());
    std::vector<float> out(n);
    for (std::size_t pos = 0; pos < n; pos += 256) {
        const std::size_t k = std::min<std::size_t>(256, n - pos);
        canceller.process(std::span<const float>(micf).subspan(pos, k), std::span<const float>(ref).subspan(pos, k),
                          std::span<float>(out).subspan(pos, k));
    }
    if (output)
        *output = out;
    return lastSecondsDb(micf, out, 3.0);
}

} // namespace

TEST_CASE("In the canceller the distortion stage adds echo reduction on an overdriven loudspeaker only",
          "[aec][distortion]")
{
    const double without = cancellerReductionDb(3.0, false), with = cancellerReductionDb(3.0, true);
    INFO("overdriven: " << without << " dB without the stage, " << with << " with");
    CHECK(with > without + 3.5);   // 12.4 -> 17.4 dB when written
    std::vector<float> linearWithout, linearWith;
    cancellerReductionDb(0.0, false, &linearWithout);
    cancellerReductionDb(0.0, true, &linearWith);
    CHECK(linearWith == linearWithout);
}
