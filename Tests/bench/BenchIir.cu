// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench iir: the single-pass GPU IIR (Kernels/iir) against the device-to-device copy bandwidth and
// CUB's inclusive scan (the prefix-sum recurrence y[n] = x[n] + y[n-1]) measured in the same run.
//   - orders 1, 2, 4, 8 (direct form, float32 arithmetic; order 8 also as 4 biquads) at 2^20 .. 2^28
//     samples: samples/s and fraction of copy bandwidth at 8 bytes per sample (4 read + 4 written);
//   - every schedule (block per tile, persistent, warp per tile, paper 000's multi-block) at 2^22, 2^26, 2^28;
//   - paper 000's case (4M samples, orders 1, 2, 4, 8): the default PLR scan and paper 000's multi-block
//     algorithm beside its Table 1 milliseconds (GTX 285);
//   - batched: 1024 channels x 4096 samples, order 2, a filter per channel, every schedule.
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"
#include "common/GpuDevice.h"
#include "iir/GpuIir.h"

namespace quell::bench {

// Shared with BenchFir.cu (same program).
namespace gpubench {

__global__ void fillNoiseKernel(float* x, std::size_t n, unsigned seed)
{
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
        h ^= h >> 16;
        h *= 0x7feb352du;
        h ^= h >> 15;
        h *= 0x846ca68bu;
        h ^= h >> 16;
        x[i] = static_cast<float>(h) * (2.0f / 4294967296.0f) - 1.0f; // uniform in [-1, 1)
    }
}

void fillNoise(float* x, std::size_t n, unsigned seed)
{
    fillNoiseKernel<<<1024, 256>>>(x, n, seed);
    QUELL_CUDA_CHECK_LAUNCH();
    QUELL_CUDA_CHECK(cudaDeviceSynchronize());
}

// Median milliseconds of `reps` timed runs of fn (enqueued on s) after one warm-up.
double timeMs(cudaStream_t s, int reps, const std::function<void()>& fn)
{
    gpu::Event a, b;
    fn();
    QUELL_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        a.record(s);
        fn();
        b.record(s);
        t.push_back(b.since(a));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Device-to-device copy bandwidth in bytes/s (bytes read + written), on `bytes` of data.
double copyBandwidth(std::size_t bytes, cudaStream_t s)
{
    gpu::DeviceBuffer<unsigned char> a(bytes), b(bytes);
    QUELL_CUDA_CHECK(cudaMemset(a.get(), 1, bytes));
    const double ms = timeMs(s, 10, [&] { QUELL_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, s)); });
    return 2.0 * static_cast<double>(bytes) / (ms * 1e-3);
}

int repsFor(std::size_t samples) { return static_cast<int>(std::clamp<std::size_t>((std::size_t(1) << 27) / samples, 5, 100)); }

} // namespace gpubench

namespace {

using namespace gpubench;

constexpr gpu::IirSchedule kSchedules[] = {gpu::IirSchedule::OneTilePerBlock, gpu::IirSchedule::Persistent,
                                           gpu::IirSchedule::WarpPerTile, gpu::IirSchedule::MultiBlock};

const char* scheduleName(gpu::IirSchedule s)
{
    switch (s) {
    case gpu::IirSchedule::OneTilePerBlock: return "tile per block";
    case gpu::IirSchedule::Persistent: return "persistent";
    case gpu::IirSchedule::WarpPerTile: return "warp per tile";
    case gpu::IirSchedule::MultiBlock: return "multi-block (paper 000)";
    default: return "auto";
    }
}

// Direct-form coefficients (DirectFormIir convention) with poles at radius r spread over the upper half
// plane (and one real pole for odd orders) and zeros at -1: a typical stable low-pass shape.
gpu::DirectFormCoefficients lowPassLike(int order, double r)
{
    std::vector<std::complex<double>> poles;
    for (int i = 0; i + 1 < order; i += 2) {
        const double th = 3.141592653589793 * (i + 1) / (2.0 * order + 2.0);
        poles.push_back(std::polar(r, th));
        poles.push_back(std::polar(r, -th));
    }
    if (order % 2 == 1)
        poles.push_back(r);
    std::vector<std::complex<double>> a{1.0};
    for (const auto& p : poles) {
        std::vector<std::complex<double>> n(a.size() + 1, 0.0);
        for (std::size_t i = 0; i < a.size(); ++i) {
            n[i] += a[i];
            n[i + 1] -= p * a[i];
        }
        a = n;
    }
    gpu::DirectFormCoefficients c;
    double binom = 1.0, sumA = 0.0;
    for (const auto& v : a)
        sumA += v.real();
    for (int k = 0; k <= order; ++k) {
        c.b.push_back(binom * sumA / std::pow(2.0, order)); // zeros at -1, unit DC gain
        binom = binom * (order - k) / (k + 1);
    }
    c.a.push_back(1.0);
    for (std::size_t j = 1; j < a.size(); ++j)
        c.a.push_back(-a[j].real());
    return c;
}

std::vector<gpu::BiquadCoefficients> lowPassCascade(int sections, double r)
{
    std::vector<gpu::BiquadCoefficients> s;
    for (int q = 0; q < sections; ++q) {
        const double th = 3.141592653589793 * (2 * q + 1) / (4.0 * sections + 2.0);
        const double a1 = -2.0 * r * std::cos(th), a2 = r * r;
        const double g = (1.0 + a1 + a2) / 4.0;
        s.push_back({g, 2.0 * g, g, a1, a2});
    }
    return s;
}

} // namespace

QUELL_BENCH_COMMAND(iir, "single-pass IIR (orders 1-8, cascades, batched) vs copy bandwidth and CUB scan")
{
    const gpu::DeviceInfo dev = gpu::queryDevice();
    if (!dev.available) {
        std::printf("quell-bench iir: no CUDA device (%s)\n", dev.description.c_str());
        return 77;
    }
    BenchReport report("iir");
    report.setInfo("device", dev.description);
    const int maxLog = args.quick ? 22 : 28;
    const std::size_t maxN = std::size_t(1) << maxLog;
    gpu::Stream stream;
    const cudaStream_t s = stream.get();

    const double copyBps = copyBandwidth(maxN * sizeof(float), s);
    report.setInfo("copy_GBps", copyBps / 1e9);
    report.add("copy bandwidth", {{"bytes", static_cast<long long>(maxN * sizeof(float))}, {"GB/s (read+write)", copyBps / 1e9},
                                  {"G samples/s at 8 B", copyBps / 8e9}});
    std::printf("device: %s; D2D copy %.1f GB/s (read + written)\n", dev.description.c_str(), copyBps / 1e9);

    gpu::DeviceBuffer<float> x(maxN), y(maxN);
    fillNoise(x.get(), maxN, 1234u);

    // Measurement sweep (QUELL_BENCH_IIR_SWEEP set): warp-tile shapes x early stores (gpu::IirTuning),
    // twice over to show the spread between identical runs; the shapes apply to float32 direct orders 1
    // and 2, early stores to the kernels compiled with them (direct orders up to 4).
    if (std::getenv("QUELL_BENCH_IIR_SWEEP") != nullptr) {
        const char* shapes[] = {"K32 SUB4", "K16 SUB4"};
        for (int round = 0; round < 2; ++round)
            for (const int order : {1, 2, 4, 8, -4}) { // -4: a cascade of 4 biquads
                for (int shape = 0; shape < (order <= 2 && order > 0 ? 2 : 1); ++shape)
                    for (int opts = 0; opts < 2; ++opts) {
                        gpu::GpuIir iir;
                        gpu::IirTuning tuning;
                        tuning.longRunShape = shape;
                        tuning.earlyStores = opts;
                        iir.setTuning(tuning);
                        if (order > 0) {
                            const auto c = lowPassLike(order, 0.95);
                            iir.prepareDirect(&c, 1, 1, maxN, gpu::IirArithmetic::Float32);
                        } else {
                            const auto q = lowPassCascade(-order, 0.95);
                            iir.prepareCascade(&q, 1, 1, maxN, gpu::IirArithmetic::Float32);
                        }
                        iir.setSchedule(gpu::IirSchedule::WarpPerTile);
                        std::printf("sweep round %d order %d %s early store %d:", round, order, shapes[shape], opts);
                        for (const int lg : {22, 24, 26, 28}) {
                            const std::size_t n = std::size_t(1) << std::min(lg, maxLog);
                            const int reps = lg <= 22 ? 100 : lg <= 24 ? 40 : lg <= 26 ? 20 : 10;
                            const double ms = timeMs(static_cast<cudaStream_t>(iir.stream()), reps,
                                                     [&] { iir.processDevice(x.get(), y.get(), n, n); });
                            std::printf(" 2^%d %.4f ms %.1f%%", lg, ms, 100.0 * static_cast<double>(n) * 8.0 / (ms * 1e-3) / copyBps);
                        }
                        std::printf(" (%s)\n", iir.variant());
                    }
            }
        return 0;
    }

    auto row = [&](const std::string& table, const std::string& what, std::size_t n, double ms, const char* variant) {
        const double sps = static_cast<double>(n) / (ms * 1e-3);
        report.add(table, {{"filter", what}, {"samples", static_cast<long long>(n)}, {"ms", ms}, {"G samples/s", sps / 1e9},
                           {"fraction of copy", sps * 8.0 / copyBps}, {"variant", std::string(variant)}});
    };

    // CUB inclusive scan: the order-1 recurrence with a = 1, the reference single-pass scan.
    for (int lg = 20; lg <= maxLog; lg += 2) {
        const std::size_t n = std::size_t(1) << lg;
        std::size_t tempBytes = 0;
        QUELL_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, tempBytes, x.get(), y.get(), static_cast<long long>(n), s));
        gpu::DeviceBuffer<unsigned char> temp(tempBytes);
        const double ms = timeMs(s, repsFor(n), [&] {
            QUELL_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.get(), tempBytes, x.get(), y.get(), static_cast<long long>(n), s));
        });
        row("throughput", "CUB InclusiveSum", n, ms, "cub");
    }

    for (const int order : {1, 2, 4, 8}) {
        const auto c = lowPassLike(order, 0.95);
        for (const auto arith : {gpu::IirArithmetic::Float32, gpu::IirArithmetic::Float64}) {
            gpu::GpuIir iir;
            iir.prepareDirect(&c, 1, 1, maxN, arith);
            for (int lg = 20; lg <= maxLog; lg += 2) {
                const std::size_t n = std::size_t(1) << lg;
                const double ms = timeMs(static_cast<cudaStream_t>(iir.stream()), repsFor(n),
                                         [&] { iir.processDevice(x.get(), y.get(), n, n); });
                row("throughput", "direct M=" + std::to_string(order), n, ms, iir.variant());
            }
        }
    }
    // Every schedule (Auto runs one of them: the table shows which wins where); float64 at 2^26 only.
    for (const int order : {1, 2, 4, 8}) {
        for (const auto arith : {gpu::IirArithmetic::Float32, gpu::IirArithmetic::Float64}) {
            const auto c = lowPassLike(order, 0.95);
            gpu::GpuIir iir;
            iir.prepareDirect(&c, 1, 1, maxN, arith);
            const bool f32 = arith == gpu::IirArithmetic::Float32;
            for (const int lg : {22, 26, maxLog}) {
                if (!f32 && lg != std::min(26, maxLog))
                    continue;
                const std::size_t n = std::size_t(1) << std::min(lg, maxLog);
                for (const auto schedule : kSchedules) {
                    iir.setSchedule(schedule);
                    const double ms = timeMs(static_cast<cudaStream_t>(iir.stream()), repsFor(n), [&] { iir.processDevice(x.get(), y.get(), n, n); });
                    const double sps = static_cast<double>(n) / (ms * 1e-3);
                    report.add("schedule", {{"order", static_cast<long long>(order)}, {"schedule", std::string(scheduleName(schedule))},
                                            {"samples", static_cast<long long>(n)}, {"ms", ms}, {"G samples/s", sps / 1e9},
                                            {"fraction of copy", sps * 8.0 / copyBps}, {"variant", std::string(iir.variant())}});
                }
            }
        }
    }
    {
        const auto q = lowPassCascade(4, 0.95);
        gpu::GpuIir iir;
        iir.prepareCascade(&q, 1, 1, maxN);
        for (int lg = 20; lg <= maxLog; lg += 2) {
            const std::size_t n = std::size_t(1) << lg;
            const double ms = timeMs(static_cast<cudaStream_t>(iir.stream()), repsFor(n), [&] { iir.processDevice(x.get(), y.get(), n, n); });
            row("throughput", "cascade 4 biquads (order 8)", n, ms, iir.variant());
        }
        for (const int lg : {22, 26, maxLog}) {
            const std::size_t n = std::size_t(1) << std::min(lg, maxLog);
            for (const auto schedule : kSchedules) {
                iir.setSchedule(schedule);
                const double ms = timeMs(static_cast<cudaStream_t>(iir.stream()), repsFor(n), [&] { iir.processDevice(x.get(), y.get(), n, n); });
                const double sps = static_cast<double>(n) / (ms * 1e-3);
                report.add("schedule, cascade 4 biquads", {{"schedule", std::string(scheduleName(schedule))}, {"samples", static_cast<long long>(n)},
                                                           {"ms", ms}, {"G samples/s", sps / 1e9}, {"fraction of copy", sps * 8.0 / copyBps},
                                                           {"variant", std::string(iir.variant())}});
            }
        }
        iir.setSchedule(gpu::IirSchedule::Auto);
        // A slowly decaying audio filter: Butterworth-like high-pass pole pair near z = 1 (20 Hz at 48 kHz).
        const double w = std::tan(3.141592653589793 * 20.0 / 48000.0), qf = std::sqrt(0.5), nrm = 1.0 / (1.0 + w / qf + w * w);
        const std::vector<gpu::BiquadCoefficients> hp{{nrm, -2.0 * nrm, nrm, 2.0 * (w * w - 1.0) * nrm, (1.0 - w / qf + w * w) * nrm}};
        gpu::GpuIir hpIir; // Auto arithmetic: float32 loses too much on this filter, so float64
        hpIir.prepareCascade(&hp, 1, 1, maxN);
        for (int lg = 20; lg <= maxLog; lg += 4) {
            const std::size_t n = std::size_t(1) << lg;
            const double ms = timeMs(static_cast<cudaStream_t>(hpIir.stream()), repsFor(n), [&] { hpIir.processDevice(x.get(), y.get(), n, n); });
            row("throughput", "butterworth HP 20 Hz @ 48k (1 biquad, auto)", n, ms, hpIir.variant());
        }
    }

    // Paper 000, Table 1: 4M samples on a GTX 285, GPU milliseconds for orders 1, 2, 4, 8; here the default
    // (Auto) scan and paper 000's own algorithm (multi-block with fast look-ahead) on this device.
    const double paperMs[] = {0.728, 0.902, 1.317, 2.058};
    int idx = 0;
    for (const int order : {1, 2, 4, 8}) {
        const std::size_t n = std::size_t(1) << 22;
        const auto c = lowPassLike(order, 0.95);
        gpu::GpuIir iir;
        iir.prepareDirect(&c, 1, 1, n);
        const double ms = timeMs(static_cast<cudaStream_t>(iir.stream()), 50, [&] { iir.processDevice(x.get(), y.get(), n, n); });
        const std::string autoVariant = iir.variant();
        iir.setSchedule(gpu::IirSchedule::MultiBlock);
        const double msLs = timeMs(static_cast<cudaStream_t>(iir.stream()), 50, [&] { iir.processDevice(x.get(), y.get(), n, n); });
        report.add("paper 000 case (4M samples)", {{"order", static_cast<long long>(order)}, {"ms (auto)", ms},
                                                   {"ms (paper 000 multi-block)", msLs},
                                                   {"paper ms (GTX 285)", paperMs[idx]}, {"speed-up (auto)", paperMs[idx] / ms},
                                                   {"auto variant", autoVariant}});
        ++idx;
    }

    // Batched: 1024 channels x 4096 samples, order 2, each channel its own filter.
    {
        const int channels = 1024;
        const std::size_t n = 4096;
        std::vector<gpu::DirectFormCoefficients> sets;
        for (int c = 0; c < channels; ++c)
            sets.push_back(lowPassLike(2, 0.5 + 0.45 * c / channels));
        gpu::GpuIir iir;
        iir.prepareDirect(sets.data(), sets.size(), channels, n);
        for (const auto schedule : {gpu::IirSchedule::Auto, kSchedules[0], kSchedules[1], kSchedules[2], kSchedules[3]}) {
            iir.setSchedule(schedule);
            const double ms = timeMs(static_cast<cudaStream_t>(iir.stream()), 100, [&] { iir.processDevice(x.get(), y.get(), n, n); });
            const double sps = static_cast<double>(n) * channels / (ms * 1e-3);
            report.add("batched", {{"channels", static_cast<long long>(channels)}, {"samples", static_cast<long long>(n)},
                                   {"order", 2LL}, {"schedule", std::string(scheduleName(schedule))}, {"ms", ms},
                                   {"G samples/s", sps / 1e9}, {"fraction of copy", sps * 8.0 / copyBps},
                                   {"variant", std::string(iir.variant())}});
        }
    }

    report.print();
    return report.writeJson(args.jsonPath) ? 0 : 1;
}

} // namespace quell::bench
