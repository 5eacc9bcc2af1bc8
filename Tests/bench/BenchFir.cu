// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench fir: GPU FIR (Kernels/fir) on 2^24 samples against the copy bandwidth measured in the same
// run: direct at 16, 64, 256 taps, FFT overlap-save at 1024, 4096, 65536 taps (several FFT sizes), both
// methods around the switch point, the batched engine shape, and the polyphase resampler.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <string>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"
#include "common/GpuDevice.h"
#include "fir/GpuFir.h"
#include "fir/GpuResampler.h"

namespace quell::bench {

std::vector<double> resamplerPrototype(int inputRate, int outputRate); // BenchFirPrototype.cpp

// Defined in BenchIir.cu (same program).
namespace gpubench {
void fillNoise(float* x, std::size_t n, unsigned seed);
double copyBandwidth(std::size_t bytes, cudaStream_t s);
int repsFor(std::size_t samples);
double timeMs(cudaStream_t s, int reps, const std::function<void()>& fn);
} // namespace gpubench

QUELL_BENCH_COMMAND(fir, "GPU FIR direct and FFT (16 .. 65536 taps) and the polyphase resampler vs copy bandwidth")
{
    using namespace gpubench;
    const gpu::DeviceInfo dev = gpu::queryDevice();
    if (!dev.available) {
        std::printf("quell-bench fir: no CUDA device (%s)\n", dev.description.c_str());
        return 77;
    }
    BenchReport report("fir");
    report.setInfo("device", dev.description);
    const std::size_t n = std::size_t(1) << (args.quick ? 20 : 24);
    gpu::Stream stream;
    const double copyBps = copyBandwidth(std::size_t(1) << 30, stream.get()); // 1 GiB, as quell-bench iir
    report.setInfo("copy_GBps", copyBps / 1e9);
    std::printf("device: %s; D2D copy %.1f GB/s (read + written)\n", dev.description.c_str(), copyBps / 1e9);
    gpu::DeviceBuffer<float> x(n), y(n);
    fillNoise(x.get(), n, 99u);

    struct Case {
        std::size_t taps;
        gpu::FirMethod method;
        std::size_t fft;
    };
    std::vector<Case> cases = {{16, gpu::FirMethod::Direct, 0},   {64, gpu::FirMethod::Direct, 0},
                               {256, gpu::FirMethod::Direct, 0},  {256, gpu::FirMethod::Fft, 0},
                               {384, gpu::FirMethod::Direct, 0},  {384, gpu::FirMethod::Fft, 0},
                               {512, gpu::FirMethod::Direct, 0},  {512, gpu::FirMethod::Fft, 0},
                               {1024, gpu::FirMethod::Direct, 0}, {1024, gpu::FirMethod::Fft, 4096},
                               {1024, gpu::FirMethod::Fft, 0},    {1024, gpu::FirMethod::Fft, 16384},
                               {4096, gpu::FirMethod::Fft, 8192}, {4096, gpu::FirMethod::Fft, 0},
                               {4096, gpu::FirMethod::Fft, 32768}, {4096, gpu::FirMethod::Fft, 65536},
                               {65536, gpu::FirMethod::Fft, 131072}, {65536, gpu::FirMethod::Fft, 0},
                               {65536, gpu::FirMethod::Fft, 524288}};
    std::vector<float> taps;
    for (const Case& k : cases) {
        taps.assign(k.taps, 0.0f);
        for (std::size_t i = 0; i < k.taps; ++i)
            taps[i] = std::exp(-static_cast<float>(i) / (static_cast<float>(k.taps) / 4.0f)) * ((i * 7919u) % 13 < 6 ? 1.0f : -1.0f) * 0.05f;
        for (const int width : {16, 8}) {
            if (width == 8 && (k.method != gpu::FirMethod::Direct || k.taps > 512))
                continue;
            gpu::GpuFir fir;
            fir.prepare(taps.data(), taps.size(), 1, n, k.method, k.fft);
            gpu::FirTuning tuning;
            tuning.directOutputsPerThread = width;
            fir.setTuning(tuning);
            const double ms = timeMs(static_cast<cudaStream_t>(fir.stream()), 20, [&] { fir.processDevice(x.get(), y.get(), n, n); });
            const double sps = static_cast<double>(n) / (ms * 1e-3);
            const bool direct = fir.method() == gpu::FirMethod::Direct;
            report.add("fir 2^24 samples", {{"taps", static_cast<long long>(k.taps)},
                                            {"method", std::string(direct ? (width == 8 ? "direct R8" : "direct R16") : "fft")},
                                            {"fft size", static_cast<long long>(fir.fftSize())}, {"ms", ms}, {"G samples/s", sps / 1e9},
                                            {"fraction of copy", sps * 8.0 / copyBps}});
        }
    }

    // Engine shape: 64 channels of 512-sample blocks, 256 taps, direct (many small launches' cost).
    {
        const int channels = 64;
        const std::size_t block = 512;
        taps.assign(256, 0.01f);
        gpu::GpuFir fir;
        fir.prepare(taps.data(), taps.size(), channels, block);
        const double ms = timeMs(static_cast<cudaStream_t>(fir.stream()), 200, [&] { fir.processDevice(x.get(), y.get(), block, block); });
        report.add("fir batched blocks", {{"channels", static_cast<long long>(channels)}, {"block", static_cast<long long>(block)},
                                          {"taps", 256LL}, {"us per call", ms * 1e3},
                                          {"G samples/s", static_cast<double>(block) * channels / (ms * 1e-3) / 1e9}});
    }

    // Polyphase resampler, 8 channels x 2^20 input samples (their own input: 8 x 2^20 is more than the
    // FIR's input in --quick runs, which read past it).
    const int channels = 8;
    const std::size_t in = std::size_t(1) << 20;
    gpu::DeviceBuffer<float> resamplerIn(in * channels);
    fillNoise(resamplerIn.get(), resamplerIn.size(), 7u);
    for (const auto& [from, to] : {std::pair{48000, 16000}, std::pair{16000, 48000}, std::pair{44100, 16000}, std::pair{16000, 44100}}) {
        gpu::GpuResampler rs;
        const std::vector<double> proto = resamplerPrototype(from, to);
        rs.prepare(from, to, proto.data(), proto.size(), channels, in);
        const std::size_t outStride = rs.maxOutput(in);
        gpu::DeviceBuffer<float> out(outStride * channels);
        std::size_t produced = 0;
        const double ms = timeMs(static_cast<cudaStream_t>(rs.stream()), 20, [&] { produced = rs.processDevice(resamplerIn.get(), in, in, out.get(), outStride); });
        report.add("resampler", {{"from", static_cast<long long>(from)}, {"to", static_cast<long long>(to)},
                                 {"channels", static_cast<long long>(channels)}, {"taps per phase", static_cast<long long>(rs.tapsPerPhase())},
                                 {"ms", ms}, {"G input samples/s", static_cast<double>(in) * channels / (ms * 1e-3) / 1e9},
                                 {"outputs per channel", static_cast<long long>(produced)}});
    }

    report.print();
    return report.writeJson(args.jsonPath) ? 0 : 1;
}

} // namespace quell::bench
