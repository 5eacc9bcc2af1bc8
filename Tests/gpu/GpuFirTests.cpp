// SPDX-License-Identifier: GPL-3.0-or-later
// [gpu][fir]: direct and FFT (overlap-save) GPU FIR against float64 CPU convolution with the same
// float32-rounded taps; streaming block splits and channels.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "dsp/Fir.h"
#include "fir/GpuFir.h"
#include "gpu/BlockSplitRunner.h"
#include "support/Signals.h"

using namespace quell;

namespace {

std::vector<float> poisoned(std::size_t n) { return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()); }

bool allFinite(const std::vector<float>& v)
{
    return std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); });
}

// float64 reference with the float32-rounded taps and inputs (dsp::Fir<double>, the CPU twin).
std::vector<double> cpuFir(const std::vector<float>& h, const float* x, std::size_t n)
{
    dsp::Fir<double> f;
    const std::vector<double> hd(h.begin(), h.end());
    f.prepare(hd);
    std::vector<double> xd(x, x + n), y(n);
    f.process(xd, y);
    return y;
}

const char* name(gpu::FirMethod m) { return m == gpu::FirMethod::Direct ? "direct" : "fft"; }

} // namespace

TEST_CASE("GpuFir direct and FFT match float64 convolution over 2^20 samples", "[gpu][fir]")
{
    const std::size_t n = std::size_t(1) << 20;
    const auto xd = test::whiteNoise(n, 5);
    const auto x = test::cast<float>(std::span<const double>(xd));
    struct Case {
        std::size_t taps;
        gpu::FirMethod method;
    };
    for (const Case k : {Case{1, gpu::FirMethod::Direct}, Case{16, gpu::FirMethod::Direct}, Case{64, gpu::FirMethod::Direct},
                         Case{257, gpu::FirMethod::Direct}, Case{1000, gpu::FirMethod::Direct},
                         Case{64, gpu::FirMethod::Fft}, Case{1024, gpu::FirMethod::Fft}, Case{4096, gpu::FirMethod::Fft},
                         Case{65536, gpu::FirMethod::Fft}}) {
        const auto hd = test::randomSystem(k.taps, static_cast<std::uint32_t>(k.taps), static_cast<double>(k.taps) / 4.0 + 1.0);
        const auto h = test::cast<float>(std::span<const double>(hd));
        const auto ref = cpuFir(h, x.data(), k.taps >= 65536 ? n / 64 : k.taps >= 4096 ? n / 8 : n); // CPU cost is O(n L)
        for (const int width : {16, 8}) {
            if (width == 8 && k.method != gpu::FirMethod::Direct)
                continue;
            gpu::GpuFir fir;
            fir.prepare(h, 1, n, k.method);
            fir.setTuning({.directOutputsPerThread = width});
            auto y = poisoned(n);
            fir.process(x, y);
            const double err = test::relativeL2(std::span<const float>(y.data(), ref.size()), std::span<const double>(ref));
            std::printf("fir %s %zu taps (width %d): relative L2 error %.3g over %zu samples (fft size %zu)\n",
                        name(fir.method()), k.taps, width, err, ref.size(), fir.fftSize());
            CHECK(allFinite(y));
            CHECK(err <= (k.method == gpu::FirMethod::Direct ? 1e-6 : 1e-5));
        }
    }
}

TEST_CASE("GpuFir streaming: awkward lengths, block splits and channels match one CPU pass", "[gpu][fir]")
{
    for (const auto method : {gpu::FirMethod::Direct, gpu::FirMethod::Fft}) {
        for (const std::size_t taps : {std::size_t(1), std::size_t(7), std::size_t(64), std::size_t(301), std::size_t(2049)}) {
            if (method == gpu::FirMethod::Direct && taps > 1000)
                continue;
            for (const std::size_t n : {std::size_t(1), std::size_t(13), std::size_t(2053), std::size_t(100003)}) {
                const int channels = 3;
                const auto hd = test::whiteNoise(taps, static_cast<std::uint32_t>(taps + 1), 0.2);
                const auto h = test::cast<float>(std::span<const double>(hd));
                const auto xd = test::whiteNoise(channels * n, static_cast<std::uint32_t>(n + taps));
                const auto x = test::cast<float>(std::span<const double>(xd));
                gpu::GpuFir fir;
                fir.prepare(h, channels, 40000, method);
                // Every direct code path: both widths, scalar and 16-byte window loads, history written by
                // the filter kernel or by its own.
                fir.setTuning({.directOutputsPerThread = n % 2 == 0 ? 16 : 8,
                               .vectorWindowLoads = (n / 13) % 2 == 0,
                               .fusedHistory = taps != 64});
                const auto y = test::runInRandomBlocks(fir, x, channels, n, static_cast<std::uint32_t>(n * 7 + taps), n / 3 + 2);
                CHECK(allFinite(y));
                for (int c = 0; c < channels; ++c) {
                    const auto ref = cpuFir(h, x.data() + c * n, n);
                    const double err = test::relativeL2(std::span<const float>(y.data() + c * n, n), std::span<const double>(ref));
                    INFO(name(method) << " taps " << taps << " length " << n << " channel " << c << " error " << err);
                    CHECK(err <= 1e-5);
                }
            }
        }
    }
}
