// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/CpuFilterChoice.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <tuple>
#include <vector>

#include "aec/LinearEchoFilter.h"
#include "dsp/FastRls.h"
#include "dsp/StereoFastRls.h"
#include "dsp/Pbfdkf.h"
#include "dsp/Rls.h"

namespace quell::aec {
namespace {

// The fastest of `runs` timings of `step` (each after one untimed warm-up call).
template <typename Step>
double fastestSeconds(int runs, Step&& step)
{
    step();
    double best = 1e30;
    for (int r = 0; r < runs; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        step();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

// The costs measured so far in this process, by shape: (kind, taps, channels, block).
struct MeasuredCosts {
    std::mutex mutex;
    std::map<std::tuple<int, int, int, int>, double> secondsPerSample;

    template <typename Measure>
    double get(std::tuple<int, int, int, int> shape, Measure&& measure)
    {
        const std::lock_guard lock(mutex);
        if (const auto it = secondsPerSample.find(shape); it != secondsPerSample.end())
            return it->second;
        const double seconds = measure();
        secondsPerSample.emplace(shape, seconds);
        return seconds;
    }
    static MeasuredCosts& instance()
    {
        static MeasuredCosts costs;
        return costs;
    }
};

double timeRlsSecondsPerSample(int taps, int channels);
double timeKalmanSecondsPerSample(const dsp::PbfdkfSettings& settings);

std::vector<float> noise(std::size_t n, unsigned seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.0f, 0.1f);
    std::vector<float> x(n);
    for (auto& v : x)
        v = g(rng);
    return x;
}

} // namespace

double measureRlsSecondsPerSample(int taps, int channels)
{
    return MeasuredCosts::instance().get({0, taps, channels, 0}, [&] { return timeRlsSecondsPerSample(taps, channels); });
}

double measureKalmanSecondsPerSample(const dsp::PbfdkfSettings& settings)
{
    return MeasuredCosts::instance().get({1, settings.taps, settings.channels, settings.blockSize},
                                         [&] { return timeKalmanSecondsPerSample(settings); });
}

namespace {

double timeRlsSecondsPerSample(int taps, int channels)
{
    dsp::RlsSettings s;
    if (channels == 1) {
        // The fast RLS: O(N) per sample, 20 ms of 16 kHz audio per run; and the shorter ones beside it
        // where there are some (makeCpuRlsFilter).
        const std::size_t n = 320;
        const std::vector<float> x = noise(n, 1), d = noise(n, 2);
        std::vector<float> e(n);
        std::vector<int> lengths = fastRlsCompanionTaps(taps);
        lengths.push_back(taps);
        double seconds = 0.0;
        for (const int length : lengths) {
            s.tapsPerChannel = length;
            dsp::FastRls fast;
            fast.prepare(s);
            seconds += fastestSeconds(3, [&] { fast.process(d, x, e); });
        }
        return seconds / static_cast<double>(n);
    }
    if (channels == 2) {
        // The two-channel fast RLS (makeCpuRlsFilter), O(N) per sample as the mono one.
        const std::size_t n = 320;
        const std::vector<float> x = noise(2 * n, 1), d = noise(n, 2);
        std::vector<float> e(n);
        s.tapsPerChannel = taps;
        s.channels = 2;
        dsp::StereoFastRls fast;
        fast.prepare(s);
        return fastestSeconds(3, [&] { fast.processInterleaved(d, x, e); }) / static_cast<double>(n);
    }
    s.tapsPerChannel = taps * channels;   // (one channel of the whole length: the cost is the same)
    dsp::Rls<float> rls;
    rls.prepare(s);
    rls.setWorkerThreads(1);   // the real-time filter runs on one thread
    // Enough samples to touch P several times and amortise the timer, few enough that 4 runs stay
    // under ~100 ms.
    const std::size_t n = static_cast<std::size_t>(std::clamp(1'000'000'000LL / (static_cast<long long>(taps) * taps * 40), 8LL, 2000LL));
    const std::vector<float> x = noise(n, 1), d = noise(n, 2);
    std::vector<float> e(n);
    const double seconds = fastestSeconds(3, [&] { rls.process(d, x, e); });
    return seconds / static_cast<double>(n);
}

double timeKalmanSecondsPerSample(const dsp::PbfdkfSettings& settings)
{
    dsp::Pbfdkf kalman;
    kalman.prepare(settings);
    // Whole blocks, at least 20 ms of 16 kHz audio per run.
    const std::size_t block = static_cast<std::size_t>(kalman.blockSize());
    const std::size_t n = std::max<std::size_t>(320, block) / block * block;
    const std::size_t channels = static_cast<std::size_t>(settings.channels);
    const std::vector<float> x = noise(n * channels, 1), d = noise(n, 2);
    std::vector<float> e(n);
    const double seconds = fastestSeconds(3, [&] { kalman.processInterleaved(d, x, e); });
    return seconds / static_cast<double>(n);
}

} // namespace

CpuFilterChoice chooseRealtimeCpuFilter(const dsp::RlsSettings& rls, const dsp::PbfdkfSettings& kalman, int sampleRate,
                                        double budget)
{
    CpuFilterChoice choice;
    char why[200];
    const double rlsLoad = measureRlsSecondsPerSample(rls.tapsPerChannel, rls.channels) * sampleRate;
    if (rlsLoad <= kRealtimeHeadroom * budget) {
        std::snprintf(why, sizeof why, " (%.2f of a core)", rlsLoad);
        choice.why = why;
        return choice;
    }
    const double kalmanLoad = measureKalmanSecondsPerSample(kalman) * sampleRate;
    const bool kalmanFits = kalmanLoad <= kRealtimeHeadroom * budget;
    if (kalmanFits || kalman.channels > 1) {   // (NLMS here is one channel's)
        choice.engine = FilterEngine::CpuKalman;
        std::snprintf(why, sizeof why,
                      kalmanFits ? " (%.2f of a core; RLS at %d taps would need %.1f)" : " (over budget: %.2f of a core; RLS at %d taps would need %.1f)",
                      kalmanLoad, rls.totalTaps(), rlsLoad);
    } else {
        choice.engine = FilterEngine::CpuNlms;
        std::snprintf(why, sizeof why, " (the Kalman filter would need %.2f of a core, RLS %.1f)", kalmanLoad, rlsLoad);
    }
    choice.why = why;
    return choice;
}

} // namespace quell::aec
