// SPDX-License-Identifier: GPL-3.0-or-later
// EchoCanceller's run-time controls: a freeze holds the echo path the output is cancelled with (and
// unfreezing resumes with what the adaptive filter learnt meanwhile); the suppressor's latency is
// reported and the amount can change while running.
#include <catch2/catch.hpp>

#include <cmath>

#include "aec/EchoCanceller.h"
#include "support/Signals.h"

using namespace quell;

namespace {

struct Path {
    std::vector<float> mic, ref;
};

// White far end through `system` (taps x 0.5), 16 kHz.
Path echoThrough(const std::vector<double>& system, std::size_t n, std::uint32_t seed)
{
    const auto x = test::whiteNoise(n, seed, 0.1);
    const auto y = test::convolve(std::span<const double>(x), std::span<const double>(system));
    Path p;
    p.ref.assign(x.begin(), x.end());
    p.mic.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        p.mic[i] = static_cast<float>(y[i]);
    return p;
}

} // namespace

TEST_CASE("Freezing holds the output's echo path; unfreezing resumes with what was learnt", "[aec][controls]")
{
    for (const bool twoPath : {true, false}) {
        INFO("two-path " << twoPath);
        aec::EchoCancellerSettings s;
        s.taps = 64;
        s.backend = aec::Backend::Cpu;
        s.cpuThreads = 1;
        s.maxDelaySeconds = 0.0;
        s.twoPath = twoPath;
        s.suppressor.enabled = false;   // the linear filter alone: exact errors
        s.restartOnPathChange = false;  // the twin would restart on the change, the frozen one cannot
        aec::EchoCanceller aec, twin;   // the twin never freezes
        aec.prepare(s, {.maximumBlockSize = 256});
        twin.prepare(s, {.maximumBlockSize = 256});
        CHECK(aec.latencySamples() == 0);
        const auto before = echoThrough(test::randomSystem(48, 1, 0.9), 16000, 2);
        const auto after = echoThrough(test::randomSystem(48, 3, 0.9), 48000, 4);
        std::vector<float> out(16000), twinOut(16000);
        aec.process(before.mic, before.ref, out);
        twin.process(before.mic, before.ref, twinOut);
        CHECK(test::reductionDb(std::span(before.mic).subspan(12000, 4000), std::span(out).subspan(12000, 4000)) > 40.0);

        aec::CancellerControls frozen;
        frozen.adapt = false;
        aec.setControls(frozen);
        const std::vector<float> held = aec.weights();
        // The room changes while frozen: the output keeps the old path, so the new echo stays, while
        // the twin follows the change.
        const auto mic1 = std::span(after.mic).first(16000), ref1 = std::span(after.ref).first(16000);
        aec.process(mic1, ref1, out);
        twin.process(mic1, ref1, twinOut);
        CHECK(aec.weights() == held);
        // Output level against the microphone's, in dB (negative: echo removed).
        const double frozenDb = -test::reductionDb(mic1.subspan(8000), std::span(out).subspan(8000));
        const double twinDb = -test::reductionDb(mic1.subspan(8000), std::span(twinOut).subspan(8000));
        CHECK(frozenDb > -10.0);
        CHECK(twinDb < frozenDb - 5.0);

        // Unfrozen: the adaptive filter behind the frozen output kept learning, so after a short while
        // the output is as good as the twin's.
        aec.setControls({});
        const auto mic2 = std::span(after.mic).subspan(16000), ref2 = std::span(after.ref).subspan(16000);
        std::vector<float> out2(mic2.size()), twinOut2(mic2.size());
        aec.process(mic2, ref2, out2);
        twin.process(mic2, ref2, twinOut2);
        CHECK(aec.weights() != held);
        const auto tail = [](const std::vector<float>& v) { return std::span(v).subspan(16000); };
        CHECK(std::fabs(test::reductionDb(tail(twinOut2), tail(out2))) < 1.0);
        CHECK(-test::reductionDb(mic2.subspan(16000), tail(out2)) < frozenDb - 10.0);
    }
}

TEST_CASE("The canceller's output is delayed by the suppressor's reported latency", "[aec][controls]")
{
    aec::EchoCancellerSettings s;
    s.taps = 64;
    s.backend = aec::Backend::Cpu;
    s.maxDelaySeconds = 0.0;
    aec::EchoCanceller aec;
    aec.prepare(s, {.maximumBlockSize = 100});
    CHECK(aec.latencySamples() == 127);   // a 128-point frame at 16 kHz
    // A near-end click with no far end: nothing to cancel or suppress.
    std::vector<float> mic(4000, 0.0f), ref(4000, 0.0f), out(4000);
    mic[1000] = 0.5f;
    aec.process(mic, ref, out);
    const auto peak = std::max_element(out.begin(), out.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); }) - out.begin();
    CHECK(peak == 1000 + aec.latencySamples());
    // The suppression amount is a run-time control.
    aec::CancellerControls c;
    c.suppressionDb = 25.0;
    c.comfortNoise = false;
    aec.setControls(c);
    CHECK(aec.controls() == c);
}
