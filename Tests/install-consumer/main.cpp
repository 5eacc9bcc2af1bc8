// SPDX-License-Identifier: GPL-3.0-or-later
// Cancels a simulated echo (white far end through a decaying random room) with the installed library's
// EchoCanceller on the CPU, and three calls of it (at different levels) in one MultiStreamCanceller, and
// checks the echo reduction: exit 0 at 20 dB or more after the first second, for each.
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "aec/EchoCanceller.h"
#include "engine/MultiStreamCanceller.h"

namespace {

double erleAfterFirstSecond(const std::vector<float>& mic, const std::vector<float>& out, int rate)
{
    double in = 0.0, left = 0.0;
    for (std::size_t i = static_cast<std::size_t>(rate); i < mic.size(); ++i) {
        in += double(mic[i]) * mic[i];
        left += double(out[i]) * out[i];
    }
    return 10.0 * std::log10(in / left);
}

} // namespace

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
    const double erle = erleAfterFirstSecond(mic, out, rate);
    std::printf("quell-consumer: %s, ERLE %.1f dB\n", canceller.backendDescription().c_str(), erle);
    bool ok = erle >= 20.0;

    // Three calls in one object, each its own level of the same scene, in 10 ms blocks.
    quell::engine::MultiStreamSettings many;
    many.canceller = settings;
    many.maxStreams = 3;
    many.threads = 2;
    quell::engine::MultiStreamCanceller calls;
    calls.prepare(many);
    const float gains[3] = {1.0f, 0.25f, 3.0f};
    std::vector<float> callMic[3], callFar[3], callOut[3];
    std::vector<quell::engine::MultiStreamCanceller::StreamBlock> blocks(3);
    for (int c = 0; c < 3; ++c) {
        for (std::size_t i = 0; i < n; ++i) {
            callMic[c].push_back(gains[c] * mic[i]);
            callFar[c].push_back(gains[c] * far[i]);
        }
        callOut[c].assign(n, 0.0f);
        blocks[static_cast<std::size_t>(c)].stream = calls.open();
    }
    const std::size_t block = calls.blockSamples();
    for (std::size_t pos = 0; pos + block <= n; pos += block) {
        for (int c = 0; c < 3; ++c) {
            auto& b = blocks[static_cast<std::size_t>(c)];
            b.mic = callMic[c].data() + pos;
            b.ref[0] = callFar[c].data() + pos;
            b.out = callOut[c].data() + pos;
        }
        calls.process(blocks);
    }
    for (int c = 0; c < 3; ++c) {
        const double e = erleAfterFirstSecond(callMic[c], callOut[c], rate);
        std::printf("quell-consumer: call %d of 3 in one MultiStreamCanceller (%s), ERLE %.1f dB\n", c + 1, calls.description().c_str(), e);
        ok = ok && e >= 20.0;
    }
    return ok ? 0 : 1;
}
