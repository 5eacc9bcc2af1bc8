// SPDX-License-Identifier: GPL-3.0-or-later
// Cancels a simulated echo (white far end through a decaying random room) with the installed library's
// EchoCanceller on the CPU and checks the echo reduction: exit 0 at 20 dB or more after the first second.
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "aec/EchoCanceller.h"

int main()
{
    constexpr int rate = 16000, seconds = 4, taps = 256;
    const std::size_t n = static_cast<std::size_t>(rate * seconds);
    std::mt19937 rng(7);
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::vector<float> room(200), far(n), mic(n, 0.0f), out(n);
    for (std::size_t k = 0; k < room.size(); ++k)
        room[k] = 0.3f * gauss(rng) * std::exp(-float(k) / 30.0f);
    for (auto& x : far)
        x = 0.05f * gauss(rng);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < room.size() && k <= i; ++k)
            mic[i] += room[k] * far[i - k];
    quell::aec::EchoCancellerSettings settings;
    settings.taps = taps;
    settings.backend = quell::aec::Backend::Cpu;
    settings.suppressor.enabled = false;
    quell::aec::EchoCanceller canceller;
    canceller.prepare(settings, {.sampleRate = 16000, .maximumBlockSize = 160, .channels = 1});
    for (std::size_t pos = 0; pos < n; pos += 160)
        canceller.process(std::span<const float>(mic).subspan(pos, 160), std::span<const float>(far).subspan(pos, 160),
                          std::span<float>(out).subspan(pos, 160));
    double in = 0.0, left = 0.0;
    for (std::size_t i = rate; i < n; ++i) {
        in += double(mic[i]) * mic[i];
        left += double(out[i]) * out[i];
    }
    const double erle = 10.0 * std::log10(in / left);
    std::printf("quell-consumer: %s, ERLE %.1f dB\n", canceller.backendDescription().c_str(), erle);
    return erle >= 20.0 ? 0 : 1;
}
