// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Recordings for the offline call batch's tests (Tests/cpu/OfflineCallBatchTests.cpp, and the GPU's), and
// the lone render they are compared with: a RealtimeEngine offline in blocks of 4096, its delay taken
// out, as quell-render runs it.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/RealtimeEngine.h"
#include "support/Signals.h"

namespace quell::test {

struct OfflineRecording {
    int rate = 16000;
    std::vector<std::vector<float>> mic;
    std::vector<float> far;
};

// A coloured far end through a 20 ms decaying path per microphone channel, noise, a near-end burst from
// a half to three quarters of the way, and a far end a tenth shorter than the microphone.
inline OfflineRecording makeOfflineRecording(int rate, int channels, double seconds, std::uint32_t seed)
{
    OfflineRecording r;
    r.rate = rate;
    const std::size_t n = static_cast<std::size_t>(seconds * rate);
    const std::vector<double> x = colouredNoise(n, seed, 0.1);
    r.far = cast<float>(x);
    for (int c = 0; c < channels; ++c) {
        const std::vector<double> y = convolve(x, randomSystem(static_cast<std::size_t>(rate / 50), seed + 10u + static_cast<std::uint32_t>(c), rate / 200.0));
        const std::vector<double> noise = whiteNoise(n, seed + 20u + static_cast<std::uint32_t>(c), 1e-4);
        const std::vector<double> near = colouredNoise(n, seed + 30u, 0.05);
        std::vector<float> m(n);
        for (std::size_t i = 0; i < n; ++i)
            m[i] = static_cast<float>(0.5 * y[i] + noise[i] + (i > n / 2 && i < 3 * n / 4 ? near[i] : 0.0));
        r.mic.push_back(std::move(m));
    }
    r.far.resize(n - n / 10);
    return r;
}

inline std::vector<std::vector<float>> renderAlone(const OfflineRecording& r, const aec::EchoCancellerSettings& settings)
{
    engine::EngineSpec spec;
    spec.hostRate = r.rate;
    spec.micChannels = static_cast<int>(r.mic.size());
    spec.maxHostBlock = 4096;
    spec.aec = settings;
    spec.offline = true;
    engine::RealtimeEngine engine;
    engine.prepare(spec);
    const std::size_t frames = r.mic[0].size(), latency = static_cast<std::size_t>(engine.latencySamples());
    std::vector<std::vector<float>> out(r.mic.size(), std::vector<float>(frames));
    std::vector<std::vector<float>> in(r.mic.size(), std::vector<float>(4096)), o(r.mic.size(), std::vector<float>(4096));
    std::vector<float> ref(4096);
    for (std::size_t pos = 0; pos < frames + latency; pos += 4096) {
        const std::size_t n = std::min<std::size_t>(4096, frames + latency - pos);
        std::vector<const float*> inPtrs;
        std::vector<float*> outPtrs;
        for (std::size_t c = 0; c < r.mic.size(); ++c) {
            for (std::size_t i = 0; i < n; ++i)
                in[c][i] = pos + i < frames ? r.mic[c][pos + i] : 0.0f;
            inPtrs.push_back(in[c].data());
            outPtrs.push_back(o[c].data());
        }
        for (std::size_t i = 0; i < n; ++i)
            ref[i] = pos + i < r.far.size() ? r.far[pos + i] : 0.0f;
        engine.process(inPtrs.data(), ref.data(), outPtrs.data(), static_cast<int>(n));
        for (std::size_t c = 0; c < r.mic.size(); ++c)
            for (std::size_t i = 0; i < n; ++i)
                if (pos + i >= latency && pos + i - latency < frames)
                    out[c][pos + i - latency] = o[c][i];
    }
    return out;
}

} // namespace quell::test
