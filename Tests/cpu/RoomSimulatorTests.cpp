// SPDX-License-Identifier: GPL-3.0-or-later
// The simulated-room test material (Tests/corpus): image-source room responses, their measured
// reverberation time, the FFT convolution, and level setting at a target echo-to-noise ratio.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <numbers>
#include <stdexcept>

#include "corpus/CorpusSignals.h"
#include "corpus/FftConvolution.h"
#include "corpus/ImpulseResponseAnalysis.h"
#include "corpus/RoomSimulator.h"
#include "corpus/Scenario.h"
#include "corpus/SpeechSynthesis.h"
#include "support/Signals.h"

using namespace quell;
using namespace quell::corpus;

namespace {

constexpr double kFs = 16000.0;
constexpr double kC = 343.0;

// A mic placed `samples` samples of travel from the source along x.
Point3 micAt(const Point3& source, double samples) { return {source.x + samples * kC / kFs, source.y, source.z}; }

RirOptions anechoicOptions()
{
    RirOptions o;
    o.sampleRate = kFs;
    o.soundSpeed = kC;
    o.lengthSeconds = 0.05;
    o.highPassHz = 0.0;
    return o;
}

} // namespace

TEST_CASE("Image method: direct path at d/c with amplitude 1/(4 pi d)", "[corpus]")
{
    // Walls with zero reflection leave only the direct path.
    const ShoeboxRoom room = uniformRoom({10.0, 8.0, 4.0}, 0.0);
    const Point3 src{2.0, 3.0, 1.5};
    const RirOptions o = anechoicOptions();

    SECTION("integer-sample delays: one exact tap, 1/r between distances")
    {
        for (const int samples : {20, 48, 97, 211}) {
            const Point3 mic = micAt(src, samples);
            const double d = distance(src, mic);
            const auto h = shoeboxImpulseResponse(room, src, mic, o);
            CHECK(peakIndex(h) == static_cast<std::size_t>(samples));
            CHECK(h[static_cast<std::size_t>(samples)] == Approx(1.0 / (4.0 * std::numbers::pi * d)).epsilon(1e-9));
            double offPeak = 0.0;
            for (std::size_t n = 0; n < h.size(); ++n)
                if (n != static_cast<std::size_t>(samples))
                    offPeak = std::max(offPeak, std::abs(h[n]));
            CHECK(offPeak < 1e-9 * h[static_cast<std::size_t>(samples)]);
        }
        const auto h1 = shoeboxImpulseResponse(room, src, micAt(src, 40), o);
        const auto h3 = shoeboxImpulseResponse(room, src, micAt(src, 120), o);
        CHECK(h1[40] / h3[120] == Approx(3.0).epsilon(1e-9));
    }

    SECTION("fractional delays: windowed-sinc kernel centred on the arrival, unit DC gain")
    {
        for (const double samples : {37.25, 64.4, 101.83, 150.07}) {
            const Point3 mic = micAt(src, samples);
            const double amplitude = 1.0 / (4.0 * std::numbers::pi * distance(src, mic));
            const auto h = shoeboxImpulseResponse(room, src, mic, o);
            double sum = 0.0, moment = 0.0;
            for (std::size_t n = 0; n < h.size(); ++n) {
                sum += h[n];
                moment += static_cast<double>(n) * h[n];
            }
            CHECK(peakIndex(h) == static_cast<std::size_t>(std::lround(samples)));
            CHECK(sum == Approx(amplitude).epsilon(0.01));
            CHECK(moment / sum == Approx(samples).margin(0.05));
        }
    }

    SECTION("the DC-removing high-pass leaves the direct path in place")
    {
        RirOptions withHp = o;
        withHp.highPassHz = 30.0;
        const Point3 mic = micAt(src, 64);
        const auto h = shoeboxImpulseResponse(room, src, mic, withHp);
        CHECK(peakIndex(h) == 64u);
        CHECK(h[64] == Approx(1.0 / (4.0 * std::numbers::pi * distance(src, mic))).epsilon(0.02));
    }

    SECTION("positions outside the room are refused")
    {
        CHECK_THROWS_AS(shoeboxImpulseResponse(room, {11.0, 1.0, 1.0}, {1.0, 1.0, 1.0}, o), std::invalid_argument);
        CHECK_THROWS_AS(shoeboxImpulseResponse(room, {1.0, 1.0, 1.0}, {1.0, -0.1, 1.0}, o), std::invalid_argument);
    }
}

TEST_CASE("Reflection coefficient from RT60: Eyring and Sabine formulas invert", "[corpus]")
{
    const Point3 size{5.0, 4.0, 2.8};
    for (const double rt : {0.1, 0.25, 0.5, 1.0}) {
        CHECK(eyringRt60(size, eyringReflection(size, rt)) == Approx(rt).epsilon(1e-12));
        const double v = size.x * size.y * size.z, s = 2.0 * (size.x * size.y + size.x * size.z + size.y * size.z);
        if (rt >= 0.25) {
            const double beta = sabineReflection(size, rt);
            CHECK(0.161 * v / (s * (1.0 - beta * beta)) == Approx(rt).epsilon(0.002)); // 24 ln10 / 343 = 0.1611
        }
        // The image-method correction only ever absorbs more than Eyring.
        CHECK(imageMethodReflection(size, rt) < eyringReflection(size, rt));
    }
    CHECK_THROWS_AS(sabineReflection(size, 0.05), std::invalid_argument); // alpha would exceed 1
}

TEST_CASE("Schroeder integration recovers the decay time of an exponential envelope", "[corpus]")
{
    for (const double t60 : {0.15, 0.4, 0.9}) {
        const auto n = static_cast<std::size_t>(1.3 * t60 * kFs);
        auto h = test::whiteNoise(n, static_cast<std::uint32_t>(t60 * 1000));
        // Amplitude falls 60 dB in t60: exp(-3 ln10 t / t60).
        for (std::size_t i = 0; i < n; ++i)
            h[i] *= std::exp(-3.0 * std::numbers::ln10 * static_cast<double>(i) / kFs / t60);
        CHECK(t20(h, kFs) == Approx(t60).epsilon(0.03));
        CHECK(t30(h, kFs) == Approx(t60).epsilon(0.03));
    }
    const std::vector<double> tooShort(100, 1.0);
    CHECK_THROWS_AS(t30(tooShort, kFs), std::runtime_error);
}

TEST_CASE("Image-method rooms decay at the target RT60 (T20 and T30 within 20%)", "[corpus]")
{
    struct Case {
        Point3 size, src, mic;
        double rt60;
    };
    const Case cases[] = {
        {{4.3, 3.8, 3.2}, {1.1, 1.3, 1.0}, {1.8, 1.5, 1.1}, 0.2},
        {{3.5, 3.0, 2.5}, {2.4, 0.9, 1.2}, {1.7, 1.6, 1.4}, 0.3},
        {{6.0, 5.0, 3.0}, {4.1, 2.2, 1.1}, {3.2, 2.9, 1.2}, 0.4},
        {{5.3, 4.1, 2.7}, {1.3, 3.1, 0.9}, {2.3, 2.4, 1.3}, 0.5},
    };
    for (const Case& c : cases) {
        RirOptions o;
        o.sampleRate = kFs;
        o.lengthSeconds = 1.2 * c.rt60;
        const auto h = shoeboxImpulseResponse(uniformRoom(c.size, imageMethodReflection(c.size, c.rt60)), c.src, c.mic, o);
        INFO("room " << c.size.x << " x " << c.size.y << " x " << c.size.z << ", target RT60 " << c.rt60);
        CHECK(t30(h, kFs) == Approx(c.rt60).epsilon(0.2));
        CHECK(t20(h, kFs) == Approx(c.rt60).epsilon(0.2));
    }
}

TEST_CASE("FFT convolution matches the direct sum on awkward lengths", "[corpus]")
{
    for (const std::size_t nx : {1u, 17u, 1009u, 40009u}) {
        for (const std::size_t nh : {1u, 3u, 331u, 4099u}) {
            const auto x = test::whiteNoise(nx, static_cast<std::uint32_t>(nx + 1));
            const auto h = test::whiteNoise(nh, static_cast<std::uint32_t>(nh + 2), 0.1);
            const auto y = convolveCausal(x, h);
            const auto ref = test::convolve(x, h);
            REQUIRE(y.size() == ref.size());
            CHECK(test::relativeL2<double, double>(y, ref) < 1e-12);
            CHECK(convolveFull(x, h).size() == nx + nh - 1);
        }
    }
}

TEST_CASE("Mixing at an echo-to-noise ratio hits the target within 0.1 dB", "[corpus]")
{
    const std::size_t n = 5 * 16000 + 123;
    // Speech-like echo with pauses: coloured noise gated on and off every 0.7 s.
    auto echo = test::colouredNoise(n, 11, 0.05);
    for (std::size_t i = 0; i < n; ++i)
        if ((i / 11200) % 2 == 1)
            echo[i] = 0.0;
    const auto noise = pinkNoise(n, 12, kFs);
    for (const double target : {40.0, 30.0, 10.0, 0.0, -5.0}) {
        auto scaled = noise;
        scale(scaled, gainForRatioDb(noise, echo, target, kFs));
        // Independent check: the echo's power over its "on" stretches against the noise's mean power.
        double pe = 0.0;
        std::size_t on = 0;
        for (std::size_t i = 0; i < n; ++i)
            if ((i / 11200) % 2 == 0) {
                pe += echo[i] * echo[i];
                ++on;
            }
        pe /= static_cast<double>(on);
        const double measured = 10.0 * std::log10(pe / meanPower(scaled));
        CHECK(measured == Approx(target).margin(0.1));
    }
    const std::vector<double> silent(1000, 0.0);
    CHECK_THROWS_AS(gainForRatioDb(noise, silent, 10.0, kFs), std::invalid_argument);
}

TEST_CASE("Pink noise has equal power per octave", "[corpus]")
{
    const std::size_t n = 1u << 18;
    const auto x = pinkNoise(n, 5, kFs);
    CHECK(rms(x) == Approx(1.0).epsilon(1e-9));
    std::vector<std::complex<double>> spectrum(x.begin(), x.end());
    fft(spectrum, false);
    auto bandPower = [&](double lo, double hi) {
        double p = 0.0;
        for (std::size_t k = 1; k < n / 2; ++k) {
            const double f = static_cast<double>(k) * kFs / static_cast<double>(n);
            if (f >= lo && f < hi)
                p += std::norm(spectrum[k]);
        }
        return 10.0 * std::log10(p);
    };
    const double ref = bandPower(250.0, 500.0);
    for (const double lo : {125.0, 1000.0, 2000.0, 4000.0})
        CHECK(bandPower(lo, 2.0 * lo) == Approx(ref).margin(0.5));
}

TEST_CASE("Music without highs: unit RMS, nothing above 5 kHz, a few spectral lines at a time", "[corpus]")
{
    const std::size_t n = 1u << 17;   // 8.2 s at 16 kHz
    const auto x = musicWithoutHighs(n, kFs, 11);
    CHECK(rms(x) == Approx(1.0).epsilon(1e-9));
    CHECK(musicWithoutHighs(n, kFs, 11) == x);
    CHECK(musicWithoutHighs(n, kFs, 12) != x);
    std::vector<std::complex<double>> spectrum(x.begin(), x.end());
    fft(spectrum, false);
    double total = 0.0, above = 0.0;
    for (std::size_t k = 1; k < n / 2; ++k) {
        const double f = static_cast<double>(k) * kFs / static_cast<double>(n);
        total += std::norm(spectrum[k]);
        if (f > 5200.0)
            above += std::norm(spectrum[k]);
    }
    CHECK(10.0 * std::log10(above / total) < -60.0);
    // Within one bar (2 s, a held chord under the melody) the strongest 2 % of the bins hold most of the
    // power: lines, not a spread spectrum (white noise's strongest 2 % hold about 10 %).
    const std::size_t bar = 1u << 15;
    std::vector<std::complex<double>> one(x.begin() + 4000, x.begin() + 4000 + static_cast<std::ptrdiff_t>(bar));
    fft(one, false);
    std::vector<double> power;
    for (std::size_t k = 1; k < bar / 2; ++k)
        power.push_back(std::norm(one[k]));
    std::sort(power.begin(), power.end(), std::greater<>());
    double top = 0.0, all = 0.0;
    for (std::size_t k = 0; k < power.size(); ++k) {
        all += power[k];
        if (k < power.size() / 50)
            top += power[k];
    }
    CHECK(top / all > 0.8);
}

TEST_CASE("Loudspeaker soft clip at a target distortion, bulk delay, response cut and path switch", "[corpus]")
{
    const auto x = test::colouredNoise(20000, 3, 0.2);
    for (const double sdr : {35.0, 25.0, 15.0}) {
        const double drive = driveForDistortion(x, sdr);
        CHECK(signalToDistortionDb(x, softClip(x, drive)) == Approx(sdr).margin(0.1));
    }
    const auto d = delayed(x, 37);
    CHECK(d.size() == x.size());
    CHECK(d[36] == 0.0);
    CHECK(d[37 + 500] == x[500]);

    const auto cut = truncateWithFade(x, 1000, 80);
    REQUIRE(cut.size() == 1000);
    CHECK(cut[919] == x[919]);                       // before the fade: untouched
    CHECK(std::abs(cut[999]) < 0.01 * std::abs(x[999]) + 1e-12); // last sample almost faded out
    CHECK(std::abs(cut[960]) < std::abs(x[960]));

    const std::vector<double> a = {1.0, 0.5}, b = {0.0, 0.0, -2.0};
    const auto y = switchedConvolution(x, a, b, 1000);
    const auto ya = convolveCausal(x, a), yb = convolveCausal(x, b);
    CHECK(y[999] == ya[999]);
    CHECK(y[1000] == yb[1000]);
    CHECK(y[15000] == yb[15000]);
}

TEST_CASE("A rendered noise scenario adds up and meets its echo-to-noise ratio", "[corpus]")
{
    Scenario s;
    s.name = "test-pink";
    s.excitation = Excitation::PinkNoise;
    s.seconds = 2.0;
    s.rt60 = 0.2;
    s.enrDb = 10.0;
    s.bulkDelayMs = 30.0;
    s.pathChange = true;
    s.seed = 99;
    const RenderedScenario r = render(s);
    REQUIRE(r.mic.size() == 1);
    REQUIRE(r.mic[0].size() == 32000);
    for (std::size_t i = 0; i < r.mic[0].size(); ++i)
        REQUIRE(r.mic[0][i] == r.near[0][i] + r.echo[0][i] + r.noise[0][i]);
    CHECK(r.measuredEnrDb == Approx(10.0).margin(0.1));
    CHECK(r.changeTime == Approx(1.0));
    // The echo is silent until the bulk delay plus the direct path have passed.
    const auto firstEcho = static_cast<std::size_t>((r.directPathMs - 1.5) * 1e-3 * kFs); // less the sinc's half width
    double early = 0.0;
    for (std::size_t i = 0; i < firstEcho; ++i)
        early = std::max(early, std::abs(r.echo[0][i]));
    CHECK(early < 1e-12 * rms(r.echo[0])); // FFT rounding only
    // The echo before the change is the stored room response applied to the delayed far end.
    const auto expected = convolveCausal(delayed(r.ref[0], 480), r.rirBefore[0]);
    std::vector<double> firstHalf(r.echo[0].begin(), r.echo[0].begin() + 16000);
    CHECK(test::relativeL2<double, double>(firstHalf, std::vector<double>(expected.begin(), expected.begin() + 16000))
          < 1e-12);
}

TEST_CASE("A quiet twin is its scenario with every signal the same number of dB down, named so", "[corpus]")
{
    Scenario s;
    s.name = "white-rt200-enr30";
    s.description = "white far end";
    s.excitation = Excitation::WhiteNoise;
    s.seconds = 1.0;
    s.rt60 = 0.2;
    s.seed = 41;
    const Scenario q = quieterTwin(s, -20.0);
    CHECK(q.levelDb == -20.0);
    CHECK(q.seed == s.seed);
    CHECK(q.name.size() > 8);
    CHECK(q.name.substr(q.name.size() - 8) == "-quiet20");
    const RenderedScenario loud = render(s), quiet = render(q);
    for (const auto member : {&RenderedScenario::ref, &RenderedScenario::near, &RenderedScenario::echo, &RenderedScenario::noise,
                              &RenderedScenario::mic})
        for (std::size_t c = 0; c < (loud.*member).size(); ++c)
            for (std::size_t i = 0; i < (loud.*member)[c].size(); i += 97)
                REQUIRE((quiet.*member)[c][i] == Approx(0.1 * (loud.*member)[c][i]).margin(1e-15));
    CHECK(quiet.measuredEnrDb == Approx(loud.measuredEnrDb).margin(1e-9));
    CHECK(quiet.farActive.size() == loud.farActive.size());
}

TEST_CASE("espeak-ng speech resampled to 16 kHz (skipped without espeak-ng)", "[corpus]")
{
    try {
        requireEspeak();
    } catch (const std::runtime_error& e) {
        WARN("skipped: " << e.what());
        return;
    }
    Utterance u;
    u.text = "Testing one two three.";
    const auto x = synthesize(u, 16000);
    // About a second of speech, trimmed, at a sane level.
    CHECK(x.size() > 8000);
    CHECK(x.size() < 48000);
    CHECK(std::abs(x.front()) >= 1e-4);
    CHECK(rms(x) > 0.01);
}
