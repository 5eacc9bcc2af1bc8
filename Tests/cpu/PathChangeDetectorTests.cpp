// SPDX-License-Identifier: GPL-3.0-or-later
// PathChangeDetector and the covariance restart it triggers: restarts only after convergence, only on
// segments where the far end plays and the microphone is above the noise, once per episode; the echo
// canceller re-converges after a path change within tens of milliseconds with it, and not without it.
#include <catch2/catch.hpp>

#include <cmath>

#include "aec/EchoCanceller.h"
#include "aec/PathChangeDetector.h"
#include "support/Signals.h"

using namespace quell;

namespace {

// One segment of 160 samples: microphone at micDb, output reduced by reductionDb, the echo estimate
// estimateBelowDb under the microphone, far end at refDb (dB of mean square).
bool segment(aec::PathChangeDetector& d, double micDb, double reductionDb, double refDb = -30.0, double estimateBelowDb = 0.0)
{
    const double n = 160.0;
    return d.segment(n * std::pow(10.0, micDb / 10.0), n * std::pow(10.0, (micDb - reductionDb) / 10.0),
                     n * std::pow(10.0, (micDb - estimateBelowDb) / 10.0), n * std::pow(10.0, refDb / 10.0), 160);
}

} // namespace

TEST_CASE("PathChangeDetector restarts once after convergence is lost, never before convergence", "[aec][pathchange]")
{
    aec::PathChangeDetector d;
    d.prepare({});
    // Not converged yet: no restart whatever the output does.
    for (int i = 0; i < 20; ++i)
        CHECK_FALSE(segment(d, -30.0, 0.0));
    for (int i = 0; i < 5; ++i)
        CHECK_FALSE(segment(d, -30.0, 30.0));
    // Converged: two bad segments are not enough, the third restarts.
    CHECK_FALSE(segment(d, -30.0, 2.0));
    CHECK_FALSE(segment(d, -30.0, 2.0));
    CHECK(segment(d, -30.0, 2.0));
    CHECK(d.restarts() == 1);
    // Still bad (double talk, or the new path not learnt yet): no second restart before re-convergence.
    for (int i = 0; i < 50; ++i)
        CHECK_FALSE(segment(d, -30.0, 2.0));
    CHECK(d.restarts() == 1);
}

TEST_CASE("PathChangeDetector does not take double talk (microphone louder than the echo estimate) for a path change",
          "[aec][pathchange]")
{
    aec::PathChangeDetector d;
    d.prepare({});
    for (int i = 0; i < 5; ++i)
        segment(d, -30.0, 30.0);
    // The near end talks: the microphone is 6 dB above what the filter expects of the echo.
    for (int i = 0; i < 50; ++i)
        CHECK_FALSE(segment(d, -30.0, 2.0, -30.0, 6.0));
    CHECK(d.restarts() == 0);
    // The room changes: the estimate is as loud as the microphone, the output barely below it.
    CHECK_FALSE(segment(d, -30.0, 2.0, -30.0, 0.5));
    CHECK_FALSE(segment(d, -30.0, 2.0, -30.0, 0.5));
    CHECK(segment(d, -30.0, 2.0, -30.0, 0.5));
}

TEST_CASE("PathChangeDetector decides nothing on far-end silence or on a microphone in the noise", "[aec][pathchange]")
{
    aec::PathChangeDetector d;
    d.prepare({});
    for (int i = 0; i < 5; ++i)
        segment(d, -30.0, 30.0);   // converged; the quietest output so far: -60 dB
    for (int i = 0; i < 20; ++i)
        CHECK_FALSE(segment(d, -30.0, 0.0, -90.0));   // far end silent
    for (int i = 0; i < 20; ++i)
        CHECK_FALSE(segment(d, -50.0, 0.0));          // microphone only 10 dB above the floor
    CHECK(d.restarts() == 0);
}

TEST_CASE("After an echo-path change the canceller re-converges within 0.1 s with the restart, not without",
          "[aec][pathchange]")
{
    const std::size_t second = 16000;
    const auto xd = test::whiteNoise(2 * second, 21, 0.1);
    const auto h1 = test::randomSystem(200, 22, 0.97), h2 = test::randomSystem(200, 23, 0.97);
    const auto y1 = test::convolve(std::span<const double>(xd), std::span<const double>(h1));
    const auto y2 = test::convolve(std::span<const double>(xd), std::span<const double>(h2));
    const auto noise = test::whiteNoise(2 * second, 24, 1e-4);
    std::vector<float> x(xd.begin(), xd.end()), mic(2 * second);
    for (std::size_t i = 0; i < mic.size(); ++i)
        mic[i] = static_cast<float>((i < second ? y1[i] : y2[i]) + noise[i]);
    double reconverged[2] = {};
    for (const bool restart : {false, true}) {
        aec::EchoCancellerSettings s;
        s.taps = 256;
        s.backend = aec::Backend::Cpu;
        s.cpuThreads = 1;
        s.maxDelaySeconds = 0.0;
        s.suppressor.enabled = false;
        s.restartOnPathChange = restart;
        aec::EchoCanceller aec;
        aec.prepare(s, {.maximumBlockSize = 160});
        std::vector<float> out(mic.size());
        aec.process(mic, x, out);
        CHECK(aec.pathChangeRestarts() == (restart ? 1 : 0));
        // The first 10 ms window after the change where the output is 30 dB below the microphone.
        reconverged[restart] = 1.0;
        for (std::size_t at = second; at + 160 <= mic.size(); at += 160) {
            if (test::reductionDb(std::span(mic).subspan(at, 160), std::span(out).subspan(at, 160)) > 30.0) {
                reconverged[restart] = static_cast<double>(at - second) / 16000.0;
                break;
            }
        }
    }
    INFO("30 dB again after " << reconverged[0] << " s without the restart (1: not within the second that follows), "
                              << reconverged[1] << " s with it");
    CHECK(reconverged[1] <= 0.1);   // (the fast RLS: 0.1 s, its 10 ms windows counted from the change)
    CHECK(reconverged[0] > 3.0 * reconverged[1]);
}
