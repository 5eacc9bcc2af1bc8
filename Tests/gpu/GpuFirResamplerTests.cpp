// SPDX-License-Identifier: GPL-3.0-or-later
// [gpu][fir][resampler]: the GPU polyphase resampler against dsp::PolyphaseResampler<double> (same
// prototype, same phase bookkeeping), streaming with random block sizes, several channels.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "dsp/PolyphaseResampler.h"
#include "fir/GpuResampler.h"
#include "support/Signals.h"

using namespace quell;

TEST_CASE("GpuResampler matches PolyphaseResampler<double> at 48k/44.1k <-> 16k, streaming", "[gpu][fir][resampler]")
{
    for (const auto& [from, to] : {std::pair{48000, 16000}, std::pair{16000, 48000}, std::pair{44100, 16000},
                                   std::pair{16000, 44100}}) {
        const int channels = 2;
        const std::size_t n = 200003;
        const auto xd = test::colouredNoise(channels * n, static_cast<std::uint32_t>(from + to), 0.5);
        const auto x = test::cast<float>(std::span<const double>(xd));
        // Reference per channel, one pass, float64 (inputs are the float32 values the GPU sees).
        std::vector<std::vector<double>> ref(channels);
        for (int c = 0; c < channels; ++c) {
            dsp::PolyphaseResampler<double> cpu;
            cpu.prepare(from, to);
            const std::vector<double> xc(x.begin() + static_cast<std::ptrdiff_t>(c * n), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * n));
            std::vector<double> y(cpu.maxOutput(n));
            y.resize(cpu.process(xc, y));
            ref[static_cast<std::size_t>(c)] = y;
        }
        gpu::GpuResampler gpu;
        gpu.prepare(from, to, channels, 50000);
        std::mt19937 rng(static_cast<std::uint32_t>(from * 3 + to));
        std::vector<std::vector<float>> got(channels);
        std::size_t pos = 0;
        while (pos < n) {
            std::size_t len = std::uniform_int_distribution<std::size_t>(1, 70000)(rng);
            if (rng() % 4 == 0)
                len = 1 + rng() % 5;
            len = std::min(len, n - pos);
            std::vector<float> in(static_cast<std::size_t>(channels) * len);
            for (int c = 0; c < channels; ++c)
                std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(c * n + pos), len, in.begin() + static_cast<std::ptrdiff_t>(c * len));
            const std::size_t stride = gpu.maxOutput(len);
            std::vector<float> out(static_cast<std::size_t>(channels) * stride, std::numeric_limits<float>::quiet_NaN());
            const std::size_t due = gpu.outputsFor(len);
            const std::size_t w = gpu.process(in.data(), len, out.data(), stride);
            REQUIRE(w == due);
            for (int c = 0; c < channels; ++c)
                got[static_cast<std::size_t>(c)].insert(got[static_cast<std::size_t>(c)].end(), out.begin() + static_cast<std::ptrdiff_t>(c * stride),
                                                        out.begin() + static_cast<std::ptrdiff_t>(c * stride + w));
            pos += len;
        }
        for (int c = 0; c < channels; ++c) {
            const auto& g = got[static_cast<std::size_t>(c)];
            const auto& r = ref[static_cast<std::size_t>(c)];
            REQUIRE(g.size() == r.size());
            CHECK(std::all_of(g.begin(), g.end(), [](float f) { return std::isfinite(f); }));
            const double err = test::relativeL2(std::span<const float>(g), std::span<const double>(r));
            std::printf("resampler %d -> %d channel %d: %zu outputs, relative L2 error %.3g (taps per phase %zu)\n", from, to,
                        c, g.size(), err, gpu.tapsPerPhase());
            CHECK(err <= 1e-5);
        }
    }
}
