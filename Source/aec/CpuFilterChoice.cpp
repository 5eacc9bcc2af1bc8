#include "aec/CpuFilterChoice.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "dsp/Nlms.h"
#include "dsp/Rls.h"

namespace quell::aec {
namespace {

class CpuNlmsFilter final : public LinearEchoFilter {
public:
    explicit CpuNlmsFilter(int taps)
    {
        dsp::NlmsSettings s;
        s.taps = taps;
        nlms_.prepare(s);
        taps_ = taps;
    }
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        nlms_.process(mic, ref, out);
    }
    void reset() override { nlms_.reset(); }
    void setAdaptation(bool on) override { nlms_.setAdaptation(on); }
    std::vector<float> weights() const override
    {
        const auto w = nlms_.weights();
        return {w.begin(), w.end()};
    }
    void copyWeights(std::span<float> out) const override
    {
        const auto w = nlms_.weights();
        for (std::size_t i = 0; i < out.size(); ++i)
            out[i] = i < w.size() ? w[i] : 0.0f;
    }
    dsp::RlsHealth health() const override { return {}; }
    std::string description() const override { return "CPU float32 NLMS, " + std::to_string(taps_) + " taps"; }
    bool onGpu() const override { return false; }

private:
    dsp::Nlms<float> nlms_;
    int taps_ = 0;
};

} // namespace

std::unique_ptr<LinearEchoFilter> makeCpuNlmsFilter(int taps) { return std::make_unique<CpuNlmsFilter>(taps); }

double measureRlsSecondsPerSample(int taps)
{
    dsp::RlsSettings s;
    s.taps = taps;
    dsp::Rls<float> rls;
    rls.prepare(s);
    std::mt19937 rng(1);
    std::normal_distribution<float> g(0.0f, 0.1f);
    // Enough samples to touch P several times and amortise the timer, few enough to stay under ~50 ms.
    const std::size_t n = static_cast<std::size_t>(std::clamp(2'000'000'000LL / (static_cast<long long>(taps) * taps * 40), 8LL, 2000LL));
    std::vector<float> x(2 * n), d(2 * n), e(2 * n);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = g(rng);
        d[i] = g(rng);
    }
    rls.process(std::span<const float>(d.data(), n), std::span<const float>(x.data(), n), std::span<float>(e.data(), n));
    const auto t0 = std::chrono::steady_clock::now();
    rls.process(std::span<const float>(d.data() + n, n), std::span<const float>(x.data() + n, n), std::span<float>(e.data() + n, n));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return seconds / static_cast<double>(n);
}

CpuFilterChoice chooseRealtimeCpuFilter(const dsp::RlsSettings& settings, int sampleRate, double budget)
{
    // The timed run has the caches to itself; in the audio pipeline the other stages share them and the
    // scheduler adds its jitter. A 512-tap RLS measured within a budget of 0.5 ran at 0.6 of a core in
    // quell-live (resampling, suppressor and foreground included) with one late block in 469 on a
    // loaded 2-core machine: a filter is taken only if it fits 80 % of the budget.
    constexpr double headroom = 0.8;
    CpuFilterChoice choice;
    const double fullLoad = measureRlsSecondsPerSample(settings.taps) * sampleRate;
    if (fullLoad <= headroom * budget) {
        choice.filter = makeCpuRlsFilter(settings);
        choice.mode = choice.filter->description();
        return choice;
    }
    dsp::RlsSettings shorter = settings;
    shorter.taps = settings.taps / 2;
    const bool shorterFits = shorter.taps >= 16 && measureRlsSecondsPerSample(shorter.taps) * sampleRate <= headroom * budget;
    char why[160];
    std::snprintf(why, sizeof why, " (RLS at %d taps needs %.1fx real time on this CPU)", settings.taps, fullLoad);
    if (shorterFits) {
        choice.filter = makeCpuRlsFilter(shorter);
        choice.mode = choice.filter->description() + ", shortened" + why;
    } else {
        choice.filter = makeCpuNlmsFilter(settings.taps);
        choice.mode = choice.filter->description() + why;
    }
    return choice;
}

} // namespace quell::aec
