// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The RLS endurance case the GPU kernels share (per-sample and block-exact): 10 minutes at 16 kHz of
// speech-like coloured noise with a silence of 0.6 s every 2 s (30 % exact zeros), a 200-tap echo path
// that changes half-way, and noise 40 dB under the echo.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "dsp/RlsSettings.h"
#include "support/Signals.h"

namespace quell::test {

struct EnduranceCase {
    static constexpr std::size_t rate = 16000, samples = 600 * rate, change = samples / 2;
    std::vector<float> x, d;
    std::vector<double> h1, h2; // the paths before and after the change
};

inline EnduranceCase makeEnduranceCase()
{
    EnduranceCase c;
    constexpr std::size_t rate = EnduranceCase::rate, samples = EnduranceCase::samples;
    std::vector<double> x = colouredNoise(samples, 2024u);
    for (std::size_t i = 0; i < samples; ++i)
        if (i % (2 * rate) >= 14 * rate / 10)
            x[i] = 0.0;
    c.h1 = randomSystem(200, 11u, 30.0);
    c.h2 = randomSystem(200, 12u, 30.0);
    const std::vector<double> y1 = convolve(x, c.h1), y2 = convolve(x, c.h2);
    std::vector<double> d(samples);
    double echoPower = 0.0;
    for (std::size_t i = 0; i < samples; ++i) {
        d[i] = i < EnduranceCase::change ? y1[i] : y2[i];
        echoPower += d[i] * d[i];
    }
    echoPower /= 0.7 * samples; // over the talk periods
    const std::vector<double> noise = whiteNoise(samples, 3u, std::sqrt(echoPower * 1e-4)); // 40 dB
    for (std::size_t i = 0; i < samples; ++i)
        d[i] += noise[i];
    c.x = cast<float>(std::span<const double>(x));
    c.d = cast<float>(std::span<const double>(d));
    return c;
}

struct EnduranceResult {
    std::vector<float> e, w;                      // every output sample; the weights at the end
    double beforeChange = 0.0, atEnd = 0.0;       // misalignment against the path in force, dB
};

// The case through a filter of `taps` taps in 10-second segments, each as process(d, x, e, n) calls of at
// most `call` samples; weights() after each segment gives the misalignment, printed every minute under
// `tag`.
template <typename Process, typename Weights>
EnduranceResult runEndurance(const EnduranceCase& c, int taps, std::size_t call, Process process, Weights weights, const char* tag)
{
    constexpr std::size_t segment = EnduranceCase::rate * 10;
    EnduranceResult r;
    r.e.assign(EnduranceCase::samples, std::numeric_limits<float>::quiet_NaN());
    std::vector<double> h1(c.h1), h2(c.h2);
    h1.resize(static_cast<std::size_t>(taps), 0.0);
    h2.resize(static_cast<std::size_t>(taps), 0.0);
    for (std::size_t i = 0; i < EnduranceCase::samples; i += segment) {
        for (std::size_t at = i; at < i + segment; at += call) {
            const std::size_t n = call < i + segment - at ? call : i + segment - at;
            process(c.d.data() + at, c.x.data() + at, r.e.data() + at, n);
        }
        r.w = weights();
        const bool before = i + segment <= EnduranceCase::change;
        const double mis = misalignmentDb<float>(r.w, before ? h1 : h2);
        if (i + segment == EnduranceCase::change)
            r.beforeChange = mis;
        r.atEnd = mis;
        if ((i / segment) % 6 == 5)
            std::printf("[%s] t=%4zu s misalignment %.1f dB\n", tag, (i + segment) / EnduranceCase::rate, mis);
    }
    return r;
}

// What every kernel must show after the case: finite outputs and weights, the paths found to 30 dB
// before the change and at the end, the far end's gaps paused. Prints the figures under `tag`.
inline void checkEndurance(const char* tag, int taps, double lambda, const EnduranceResult& r, const dsp::RlsHealth& h)
{
    std::printf("[%s] N=%d lambda=%.5f: misalignment before the change %.1f dB, at the end %.1f dB; reinitialisations %llu, "
                "paused samples %llu\n",
                tag, taps, lambda, r.beforeChange, r.atEnd, static_cast<unsigned long long>(h.reinitialisations),
                static_cast<unsigned long long>(h.pausedSamples));
    const auto finite = [](const std::vector<float>& v) { return std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); }); };
    CHECK(finite(r.e));
    CHECK(finite(r.w));
    CHECK(r.beforeChange < -30.0);
    CHECK(r.atEnd < -30.0);
    CHECK(h.pausedSamples > EnduranceCase::samples / 4);
}

} // namespace quell::test
