// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench cpukalman: what the CPU Kalman filter (dsp::Pbfdkf) and the FFTs under it cost on one core
// of this host, beside the budget (half a core in real time) and a 2-core machine's share.
//  - FFT rows: complex (FftPlan) and real (RealFftPlan) transforms of the sizes the canceller uses, in
//    ns per transform and per butterfly (N/2 log2 N of them for a complex N-point transform); the real
//    transform against the complex one of the same size (ideal: a little over 0.5), and against the same
//    real transform in FFTW 3 (planned with FFTW_MEASURE) and KissFFT where the build found them
//    (pkg-config fftw3f, kissfft-float; test tools only, as quell-eval's peers are). Each real row is a
//    forward and an inverse transform of fixed data, halved; Quell's inverse includes its 1/N scaling,
//    the peers' do not scale.
//  - Kalman rows: one stream at 16 and 48 kHz over the tails the plugin and quell-live run, fed in the
//    engine's calls (10 ms at 16 kHz, 512 and 1024 frames at 48 kHz): the fraction of a core it needs (all
//    the calls' time over the audio's duration) and the calls' median, p99 and worst time.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "BenchSignals.h"
#include "FastestNs.h"
#include "Percentile.h"
#include "dsp/Fft.h"
#include "dsp/Pbfdkf.h"
#include "dsp/RealFft.h"

#ifdef QUELL_BENCH_FFTW
#include <fftw3.h>
#endif
#ifdef QUELL_BENCH_KISSFFT
#include <kiss_fftr.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using quell::bench::fastestNs;
using quell::bench::percentile;

} // namespace

QUELL_BENCH_COMMAND(cpukalman, "CPU Kalman filter and its FFTs on one core: fraction of a core per stream, ns per butterfly")
{
    quell::bench::BenchReport report("cpukalman");
    std::mt19937 rng(3u);
    std::normal_distribution<float> g(0.0f, 0.1f);

    for (const std::size_t n : {128u, 256u, 512u, 1024u, 2048u}) {
        const quell::dsp::FftPlan<float> complexPlan(n);
        const quell::dsp::RealFftPlan<float> realPlan(n);
        std::vector<std::complex<float>> c(n), spectrum(realPlan.bins());
        std::vector<float> x(n), back(n);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = g(rng);
            c[i] = {g(rng), g(rng)};
        }
        const int runs = args.quick ? 200 : 2000;
        // Forward and inverse in turn, so the data stays bounded.
        const double complexNs = fastestNs(5, runs, [&] {
            complexPlan.transform(c, false);
            complexPlan.transform(c, true);
        }) / 2.0;
        const double realNs = fastestNs(5, runs, [&] {
            realPlan.forward(x, spectrum);
            realPlan.inverse(spectrum, back);
        }) / 2.0;
        const double butterflies = 0.5 * static_cast<double>(n) * std::log2(static_cast<double>(n));
        std::vector<std::pair<std::string, quell::bench::BenchReport::Value>> row = {{"points", static_cast<long long>(n)},
                              {"complex ns", complexNs},
                              {"complex ns per butterfly", complexNs / butterflies},
                              {"real ns", realNs},
                              {"real / complex", realNs / complexNs}};
        std::printf("FFT %4zu points: complex %.0f ns (%.2f ns per butterfly), real %.0f ns (%.2f of complex)", n, complexNs,
                    complexNs / butterflies, realNs, realNs / complexNs);
        [[maybe_unused]] const auto addPeer = [&](const std::string& key, const char* name, double peerNs) {
            row.emplace_back(key + " real ns", peerNs);
            row.emplace_back("real / " + key, realNs / peerNs);
            std::printf(", %s %.0f ns (Quell %.2f x its time)", name, peerNs, realNs / peerNs);
        };
#ifdef QUELL_BENCH_FFTW
        {
            float* in = fftwf_alloc_real(n);
            float* out = fftwf_alloc_real(n);
            fftwf_complex* freq = fftwf_alloc_complex(n / 2 + 1);
            const int size = static_cast<int>(n);
            fftwf_plan forwardPlan = fftwf_plan_dft_r2c_1d(size, in, freq, FFTW_MEASURE);
            fftwf_plan inversePlan = fftwf_plan_dft_c2r_1d(size, freq, out, FFTW_MEASURE | FFTW_DESTROY_INPUT);
            std::copy(x.begin(), x.end(), in);   // (after planning: FFTW_MEASURE overwrites the arrays)
            const double fftwNs = fastestNs(5, runs, [&] {
                fftwf_execute(forwardPlan);
                fftwf_execute(inversePlan);
            }) / 2.0;
            fftwf_destroy_plan(forwardPlan);
            fftwf_destroy_plan(inversePlan);
            fftwf_free(in);
            fftwf_free(out);
            fftwf_free(freq);
            addPeer("fftw", "FFTW", fftwNs);
        }
#endif
#ifdef QUELL_BENCH_KISSFFT
        {
            kiss_fftr_cfg forwardCfg = kiss_fftr_alloc(static_cast<int>(n), 0, nullptr, nullptr);
            kiss_fftr_cfg inverseCfg = kiss_fftr_alloc(static_cast<int>(n), 1, nullptr, nullptr);
            std::vector<kiss_fft_cpx> freq(n / 2 + 1);
            const double kissNs = fastestNs(5, runs, [&] {
                kiss_fftr(forwardCfg, x.data(), freq.data());
                kiss_fftri(inverseCfg, freq.data(), back.data());
            }) / 2.0;
            kiss_fftr_free(forwardCfg);
            kiss_fftr_free(inverseCfg);
            addPeer("kissfft", "KissFFT", kissNs);
        }
#endif
        std::printf("\n");
        report.add("FFT, float, one core", std::move(row));
    }

    struct Case {
        int rate, taps, call;
    };
    const std::vector<Case> cases = args.quick ? std::vector<Case>{{16000, 4096, 160}, {48000, 4096, 1024}}
                                               : std::vector<Case>{{16000, 1024, 160}, {16000, 2048, 160}, {16000, 4096, 160},
                                                                   {48000, 4096, 512}, {48000, 4096, 1024}, {48000, 8192, 1024},
                                                                   {48000, 16384, 1024}};
    for (const Case& k : cases) {
        quell::dsp::PbfdkfSettings settings;
        settings.taps = k.taps;
        quell::dsp::Pbfdkf kalman;
        kalman.prepare(settings);
        const double seconds = args.quick ? 2.0 : 10.0;
        const std::size_t n = static_cast<std::size_t>(seconds * k.rate) / static_cast<std::size_t>(k.call) * static_cast<std::size_t>(k.call);
        const quell::bench::ColouredEcho echo = quell::bench::colouredEcho(n, 7u);
        const std::vector<float>&x = echo.x, &d = echo.d;
        std::vector<float> e(n);
        std::vector<double> callUs;
        for (std::size_t at = 0; at < n; at += static_cast<std::size_t>(k.call)) {
            const std::size_t len = static_cast<std::size_t>(k.call);
            const auto t0 = Clock::now();
            kalman.process({d.data() + at, len}, {x.data() + at, len}, {e.data() + at, len});
            callUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
        const double periodUs = 1e6 * k.call / k.rate;
        const double median = percentile(callUs, 0.5), p99 = percentile(callUs, 0.99),
                     worst = *std::max_element(callUs.begin(), callUs.end());
        double totalUs = 0.0;
        for (const double us : callUs)
            totalUs += us;
        const double load = totalUs / (1e6 * static_cast<double>(n) / k.rate);   // (calls hold 0, 1 or 2 block ends)
        report.add("Kalman filter, one stream, one core",
                   {{"rate", static_cast<long long>(k.rate)},
                    {"taps", static_cast<long long>(k.taps)},
                    {"tail ms", 1000.0 * k.taps / k.rate},
                    {"block B", static_cast<long long>(kalman.blockSize())},
                    {"partitions", static_cast<long long>(kalman.partitions())},
                    {"call frames", static_cast<long long>(k.call)},
                    {"call us median", median},
                    {"call us p99", p99},
                    {"call us max", worst},
                    {"fraction of a core", load},
                    {"p99 / period", p99 / periodUs},
                    {"streams per core", 1.0 / load}});
        std::printf("Kalman %5d Hz %5d taps (%3.0f ms, %2d x %3d), %4d-frame calls: median %6.0f us, p99 %6.0f, max %6.0f of %5.0f us: "
                    "%.3f of a core, %.0f streams per core\n",
                    k.rate, k.taps, 1000.0 * k.taps / k.rate, kalman.partitions(), kalman.blockSize(), k.call, median, p99, worst,
                    periodUs, load, 1.0 / load);
        std::fflush(stdout);
    }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
