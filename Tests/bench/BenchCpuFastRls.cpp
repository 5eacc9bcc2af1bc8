// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench cpufastrls: what the CPU's default linear filters (dsp::FastRls and dsp::StereoFastRls, exact
// RLS at O(N) a sample) cost on one core of this host, beside memcpy of the same bytes measured in the same
// run.
//  - One stream at 16 kHz, fed in the engine's 10 ms calls, over 1024 to 8192 taps: the fraction of a
//    core (all the calls' time over the audio's duration) and ns per tap and sample.
//  - The yardstick: a sample of the filter makes two passes over its arrays, reading 10 streams of N doubles
//    and writing 4 (FastRlsKernels.h). The same number of bytes moved by memcpy (7 arrays copied into 7
//    others of the same size, so the working set matches too) is the yardstick: the row's "of memcpy" is
//    the filter's time over memcpy's. It is not a hard floor: where 14 arrays outgrow the L2 cache
//    (8192 taps here) memcpy slows down more than the filter's two passes do.
//  - The same for two far-end channels (dsp::StereoFastRls, the stereo far end's default filter), 1024 to
//    4096 taps per channel: its two passes read 14 streams of 2 N doubles and write 6, so the yardstick is
//    10 arrays of 2 N copied into 10 others.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "BenchSignals.h"
#include "FastestNs.h"
#include "dsp/FastRls.h"
#include "dsp/StereoFastRls.h"

namespace {

using Clock = std::chrono::steady_clock;

// 2 x copies x n doubles moved by memcpy (`copies` arrays read, as many written): the bytes of one sample
// of a fast RLS at the host's best copy rate, for a working set of the same size. The best of `repeats`
// runs of 200.
double memcpyOfTheSameBytesNs(std::size_t n, std::size_t copies, int repeats)
{
    std::vector<std::vector<double>> a(2 * copies);
    for (std::size_t k = 0; k < a.size(); ++k)
        a[k].assign(n, 1e-3 * static_cast<double>(k + 1));
    std::size_t s = 0;
    const double best = quell::bench::fastestNs(repeats, 200, [&] {
        for (std::size_t k = 0; k < copies; ++k)
            std::memcpy(a[(k + copies + s) % a.size()].data(), a[(k + s) % a.size()].data(), n * sizeof(double));
        ++s;
    });
    volatile double sink = a[0][n / 2] + a[a.size() - 1][n / 3];
    (void)sink;
    return best;
}

// A filter fed `call` samples at a time (`process(at)`) over n samples: ns a sample.
template <typename Process>
double nsPerSample(std::size_t n, std::size_t call, Process process)
{
    const auto t0 = Clock::now();
    for (std::size_t at = 0; at < n; at += call)
        process(at);
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
}

// One row of the report and its printed line: the filter (`what`, `values` doubles in each of its arrays)
// at perSampleNs and `rate` samples a second, beside memcpy of the bytes its two passes move a sample
// (`copies` arrays read, as many written).
void addRow(quell::bench::BenchReport& report, const quell::bench::BenchArgs& args, const std::string& table, const std::string& tapsKey,
            int taps, const std::string& what, std::size_t values, std::size_t copies, double perSampleNs, double rate,
            unsigned long long reinitialisations)
{
    const double memcpyNs = memcpyOfTheSameBytesNs(values, copies, args.quick ? 3 : 7);
    const double load = perSampleNs * 1e-9 * rate;
    const double bytes = 2.0 * static_cast<double>(copies) * 8.0 * static_cast<double>(values);
    const double perValueNs = perSampleNs / static_cast<double>(values);
    report.add(table, {{tapsKey, static_cast<long long>(taps)},
                       {"ns per sample", perSampleNs},
                       {"ns per tap and sample", perValueNs},
                       {"fraction of a core", load},
                       {"GB/s moved", bytes / perSampleNs},
                       {"memcpy ns per sample", memcpyNs},
                       {"of memcpy", perSampleNs / memcpyNs},
                       {"re-initialisations", static_cast<long long>(reinitialisations)}});
    std::printf("%s: %7.0f ns a sample (%.2f ns a tap), %.3f of a core at 16 kHz, %.0f GB/s; "
                "memcpy of the same bytes %6.0f ns: %.2f x memcpy\n",
                what.c_str(), perSampleNs, perValueNs, load, bytes / perSampleNs, memcpyNs, perSampleNs / memcpyNs);
    std::fflush(stdout);
}

} // namespace

QUELL_BENCH_COMMAND(cpufastrls, "CPU fast RLS (the CPU's default filter), one and two far-end channels, on one core: fraction of a core per stream, against memcpy of the same bytes")
{
    quell::bench::BenchReport report("cpufastrls");
    const std::vector<int> tapsList = !args.taps.empty() ? args.taps
                                      : args.quick       ? std::vector<int>{1024, 4096}
                                                         : std::vector<int>{1024, 2048, 4096, 8192};
    const double seconds = args.quick ? 2.0 : 8.0;
    const std::size_t rate = 16000, call = 160;
    const std::size_t n = static_cast<std::size_t>(seconds * rate) / call * call;
    const quell::bench::ColouredEcho echo = quell::bench::colouredEcho(n, 5u);
    std::vector<float> e(n);
    for (const int taps : tapsList) {
        quell::dsp::RlsSettings settings;
        settings.tapsPerChannel = taps;
        settings.lambda = 1.0 - 1.0 / (4.0 * taps);
        quell::dsp::FastRls filter;
        filter.prepare(settings);
        const double perSampleNs = nsPerSample(n, call, [&](std::size_t at) {
            filter.process({echo.d.data() + at, call}, {echo.x.data() + at, call}, {e.data() + at, call});
        });
        char what[64];
        std::snprintf(what, sizeof what, "fast RLS %5d taps", taps);
        addRow(report, args, "fast RLS, one stream at 16 kHz, one core", "taps", taps, what, static_cast<std::size_t>(taps), 7,
               perSampleNs, rate, filter.health().reinitialisations);
    }
    // Two far-end channels: the second channel's far end and echo from another seed, the echoes summed.
    const quell::bench::ColouredEcho second = quell::bench::colouredEcho(n, 6u);
    std::vector<float> ref(2 * n), d(n);
    for (std::size_t i = 0; i < n; ++i) {
        ref[2 * i] = echo.x[i];
        ref[2 * i + 1] = second.x[i];
        d[i] = echo.d[i] + second.d[i];
    }
    const std::vector<int> stereoTaps = !args.taps.empty() ? args.taps : args.quick ? std::vector<int>{4096} : std::vector<int>{1024, 2048, 4096};
    for (const int taps : stereoTaps) {
        quell::dsp::RlsSettings settings;
        settings.tapsPerChannel = taps;
        settings.channels = 2;
        settings.lambda = 1.0 - 1.0 / (20.0 * taps);
        quell::dsp::StereoFastRls filter;
        filter.prepare(settings);
        const double perSampleNs = nsPerSample(n, call, [&](std::size_t at) {
            filter.processInterleaved({d.data() + at, call}, {ref.data() + 2 * at, 2 * call}, {e.data() + at, call});
        });
        char what[64];
        std::snprintf(what, sizeof what, "two-channel fast RLS 2 x %4d taps", taps);
        addRow(report, args, "two-channel fast RLS, one stream at 16 kHz, one core", "taps per channel", taps, what,
               2 * static_cast<std::size_t>(taps), 10, perSampleNs, rate, filter.health().reinitialisations);
    }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
