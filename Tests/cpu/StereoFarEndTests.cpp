// SPDX-License-Identifier: GPL-3.0-or-later
// A stereo far end: two loudspeakers with their own echo paths into one microphone. The canceller with
// a far end of 2 channels (the spec's) learns both paths (one RLS over the stacked regressor) and cancels what the mono
// downmix cannot.
#include <catch2/catch.hpp>

#include <cmath>

#include "aec/EchoCanceller.h"
#include "support/Signals.h"

using namespace quell;

namespace {

struct StereoScene {
    std::vector<float> left, right, mic;
};

// 3 s at 16 kHz: the channels share a common part (a stereo mix) but differ; paths of 40 taps after a
// bulk delay of 30 ms; noise 45 dB below the echo.
StereoScene stereoScene()
{
    const std::size_t n = 48000, delay = 480;
    const auto common = test::colouredNoise(n, 71), l = test::colouredNoise(n, 72), r = test::colouredNoise(n, 73);
    std::vector<double> xl(n), xr(n);
    for (std::size_t i = 0; i < n; ++i) {
        xl[i] = 0.6 * common[i] + 0.8 * l[i];
        xr[i] = 0.6 * common[i] + 0.8 * r[i];
    }
    const auto hl = test::randomSystem(40, 74, 8.0), hr = test::randomSystem(40, 75, 8.0);
    const auto yl = test::convolve(std::span<const double>(xl), std::span<const double>(hl));
    const auto yr = test::convolve(std::span<const double>(xr), std::span<const double>(hr));
    const auto noise = test::whiteNoise(n, 76, 1e-5);
    StereoScene s;
    s.left.assign(xl.begin(), xl.end());
    s.right.assign(xr.begin(), xr.end());
    s.mic.assign(n, 0.0f);
    for (std::size_t i = delay; i < n; ++i)
        s.mic[i] = static_cast<float>(yl[i - delay] + yr[i - delay] + noise[i]);
    return s;
}

double erleLastSecond(const std::vector<float>& mic, const std::vector<float>& out)
{
    return test::reductionDb(std::span(mic).last(16000), std::span(out).last(16000));
}

} // namespace

TEST_CASE("A stereo far end is cancelled as one two-channel echo path, which the downmix cannot", "[aec][stereo]")
{
    const StereoScene scene = stereoScene();
    aec::EchoCancellerSettings s;
    s.taps = 128;
    s.backend = aec::Backend::Auto;   // the GPU's block RLS where there is one (it takes two channels), else the CPU's
    s.cpuThreads = 1;
    s.suppressor.enabled = false;     // the linear filter alone: the figures are its own
    double erle[2] = {};
    for (const int channels : {1, 2}) {
        aec::EchoCanceller aec;
        aec.prepare(s, {.maximumBlockSize = 200, .channels = channels});
        std::vector<float> out(scene.mic.size());
        if (channels == 2) {
            CHECK(aec.backendDescription().find("2 far-end channels") != std::string::npos);
            const std::span<const float> refs[2] = {scene.left, scene.right};
            aec.process(scene.mic, std::span<const std::span<const float>>(refs), out);
        } else {
            std::vector<float> mono(scene.mic.size());
            for (std::size_t i = 0; i < mono.size(); ++i)
                mono[i] = 0.5f * (scene.left[i] + scene.right[i]);
            aec.process(scene.mic, mono, out);
        }
        erle[channels - 1] = erleLastSecond(scene.mic, out);
        // The bulk delay is found on the channels' sum (30 ms, less the 4 ms margin).
        CHECK(std::abs(aec.alignedDelaySamples() - (480 - 64)) <= 8);
    }
    INFO("ERLE over the last second: downmix " << erle[0] << " dB, two channels " << erle[1] << " dB");
    CHECK(erle[1] > 25.0);   // 29.9 dB when written
    CHECK(erle[0] < 10.0);   // 1.8 dB: no single filter fits both paths
    CHECK(erle[1] > erle[0] + 15.0);
}

TEST_CASE("A stereo canceller refuses a mono far end and bad channel counts", "[aec][stereo]")
{
    aec::EchoCancellerSettings s;
    s.taps = 16;
    s.backend = aec::Backend::Cpu;
    aec::EchoCanceller aec;
    CHECK_THROWS_AS(aec.prepare(s, {.maximumBlockSize = 64, .channels = 3}), std::invalid_argument);
    CHECK_THROWS_AS(aec.prepare(s, {.maximumBlockSize = 0, .channels = 1}), std::invalid_argument);
    aec.prepare(s, {.maximumBlockSize = 64, .channels = 2});
    std::vector<float> mic(64), ref(64), out(64);
    CHECK_THROWS_AS(aec.process(mic, ref, out), std::invalid_argument);
}
