// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The scene the plugin front ends loaded as their hosts load them (the SPA backend, the control-port
// LV2) are tested on: 6 s at `rate` of a speech-like far end through a random room of 1500 taps, its echo
// at half level at the microphone, and a near-end talker (its own noise, at the echo's level) in the
// last 2 s; with the two figures those tests assert.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "support/Signals.h"

namespace quell::test {

struct FrontEndScene {
    std::size_t rate = 0;
    std::vector<float> far, near, mic;

    // Far-end single talk after convergence (2-4 s), microphone over output in dB. The output is late by
    // the front end's latency (tens of ms): over two seconds of steady noise that moves the energies by a
    // fraction of a dB.
    double erleDb(const std::vector<float>& out) const
    {
        return 10.0 * std::log10(energy(mic, 2 * rate, 4 * rate) / energy(out, 2 * rate, 4 * rate));
    }
    // Double talk (4.5-6 s), output over near end in dB: 0 where the talker passes untouched.
    double nearEndKeptDb(const std::vector<float>& out) const
    {
        return 10.0 * std::log10(energy(out, 4 * rate + rate / 2, 6 * rate) / energy(near, 4 * rate + rate / 2, 6 * rate));
    }

    static double energy(const std::vector<float>& v, std::size_t from, std::size_t to)
    {
        double e = 0.0;
        for (std::size_t i = from; i < to; ++i)
            e += double(v[i]) * v[i];
        return e;
    }
};

inline FrontEndScene frontEndScene(std::size_t rate, std::uint32_t seed)
{
    const std::size_t n = 6 * rate;
    const auto x = colouredNoise(n, seed, 0.1);
    const auto h = randomSystem(1500, seed + 1, 300.0);
    const auto y = convolve(std::span<const double>(x), std::span<const double>(h));
    const auto v = colouredNoise(n, seed + 2, 0.1);
    FrontEndScene s;
    s.rate = rate;
    s.far.assign(x.begin(), x.end());
    s.near.assign(n, 0.0f);
    s.mic.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (i >= 4 * rate)
            s.near[i] = static_cast<float>(0.5 * v[i]);
        s.mic[i] = static_cast<float>(0.5 * y[i]) + s.near[i];
    }
    return s;
}

} // namespace quell::test
