// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <string>

#include "aec/CpuFilterAdapter.h"
#include "dsp/FastRls.h"

namespace quell::aec {
namespace {

// Several far-end channels: the float32 RLS with its covariance (their regressor does not shift as one).
class CpuRlsFilter final : public CpuFilterAdapter<dsp::Rls<float>> {
public:
    CpuRlsFilter(const dsp::RlsSettings& settings, int threads)
    {
        filter_.prepare(settings);
        filter_.setWorkerThreads(threads);
    }
    int taps() const override { return filter_.settings().tapsPerChannel; }
    int channels() const override { return filter_.settings().channels; }
    void restartCovariance() override { filter_.restartCovariance(); }
    std::string description() const override
    {
        if (channels() > 1)
            return "CPU float32 RLS, " + std::to_string(channels()) + " far-end channels x " + std::to_string(taps()) + " taps";
        return "CPU float32 RLS, " + std::to_string(taps()) + " taps";
    }
};

// One far-end channel: the same least squares at O(N) per sample (dsp::FastRls).
class CpuFastRlsFilter final : public CpuFilterAdapter<dsp::FastRls> {
public:
    explicit CpuFastRlsFilter(const dsp::RlsSettings& settings) { filter_.prepare(settings); }
    int taps() const override { return filter_.taps(); }
    int channels() const override { return 1; }
    void restartCovariance() override { filter_.restartCovariance(); }
    std::string description() const override { return "CPU float64 fast RLS, " + std::to_string(taps()) + " taps"; }
};

// One far-end channel at 2048 taps or more: the fast RLS of that length with one of half the length
// beside it, on the same samples, and whichever has had the lower error over the last 10 ms leads (its
// error is the output, its weights are the ones copied) until the other's falls under 0.8 of it. Why:
// least squares over n samples leaves the noise's error in the weights in proportion to taps / n, so a
// 4096-tap filter needs four times the samples of a 1024-tap one to fit a path to the same depth, and
// until then the shorter filter cancels more; once the longer one has learnt the room's tail it leads.
// Measured (physical corpus, CPU defaults: 4096 taps, the 33 mono files with echo, mean steady ERLE /
// mean near-end SNR after the fit of the 9 double-talk files): alone 30.26 / 32.58 dB; with 1024 beside
// it 30.44 / 32.58; with 2048 30.95 / 32.78 (speech at 10 dB echo-to-noise 16.1 -> 17.8 and 17.2 -> 18.6,
// white and pink noise there 21.2 -> 22.8 and 21.0 -> 22.7, its double talk 14.9 -> 18.8, a 150 ms
// delay 28.2 -> 33.0; the distorting loudspeaker at 18 dB 28.4 -> 27.4 the largest loss). Short corpus
// (5 s files, 14 ms paths), near SNR after the fit in double talk that starts 2.7 s into the call
// (echo as loud / 6 dB quieter / 6 dB louder): alone 20.2 / 39.2 / 22.7, with 2048 26.0 / 41.8 / 32.3,
// with 1024 42.7 / 47.1 / 37.6. The pair costs 1.5 times the filter alone (9 N multiply-adds a sample
// each). The lead changes only every segmentSamples samples counted from the start, so the output does
// not depend on how the signal is split into calls.
class CpuFastRlsPair final : public LinearEchoFilter {
public:
    static constexpr std::size_t kSegment = 160;   // 10 ms at 16 kHz
    static constexpr double kTakeOverBelow = 0.8;

    explicit CpuFastRlsPair(const dsp::RlsSettings& settings)
        : long_(settings), short_(companionSettings(settings)), shortError_(kSegment)
    {
    }
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        for (std::size_t at = 0; at < mic.size();) {
            const std::size_t n = std::min(mic.size() - at, kSegment - inSegment_);
            const std::span<float> es(shortError_.data(), n), el = out.subspan(at, n);
            short_.process(mic.subspan(at, n), ref.subspan(at, n), es);
            long_.process(mic.subspan(at, n), ref.subspan(at, n), el);   // out may alias mic: the short one has read it
            for (std::size_t i = 0; i < n; ++i) {
                segLong_ += double(el[i]) * el[i];
                segShort_ += double(es[i]) * es[i];
            }
            if (shortLeads_)
                std::copy(es.begin(), es.end(), el.begin());
            at += n;
            inSegment_ += n;
            if (inSegment_ == kSegment) {
                if (shortLeads_ ? segLong_ < kTakeOverBelow * segShort_ : segShort_ < kTakeOverBelow * segLong_)
                    shortLeads_ = !shortLeads_;
                segLong_ = segShort_ = 0.0;
                inSegment_ = 0;
            }
        }
    }
    void reset() override
    {
        long_.reset();
        short_.reset();
        shortLeads_ = false;
        segLong_ = segShort_ = 0.0;
        inSegment_ = 0;
    }
    int taps() const override { return long_.taps(); }
    int channels() const override { return 1; }
    std::vector<float> weights() const override
    {
        std::vector<float> w(static_cast<std::size_t>(taps()));
        copyWeights(w);
        return w;
    }
    void copyWeights(std::span<float> out) const override { shortLeads_ ? short_.copyWeights(out) : long_.copyWeights(out); }
    void restartCovariance() override
    {
        long_.restartCovariance();
        short_.restartCovariance();
    }
    void setAdaptation(bool on) override
    {
        long_.setAdaptation(on);
        short_.setAdaptation(on);
    }
    dsp::RlsHealth health() const override
    {
        dsp::RlsHealth h = long_.health();
        const dsp::RlsHealth s = short_.health();
        h.reinitialisations += s.reinitialisations;
        return h;
    }
    std::string description() const override
    {
        return long_.description() + " (" + std::to_string(short_.taps()) + " beside it)";
    }
    bool onGpu() const override { return false; }
    // Whether the shorter filter makes the output now.
    bool shortLeads() const { return shortLeads_; }

private:
    static dsp::RlsSettings companionSettings(const dsp::RlsSettings& settings)
    {
        dsp::RlsSettings s = settings;
        s.tapsPerChannel = fastRlsCompanionTaps(settings.tapsPerChannel);
        // The automatic memory at its own length (EchoCancellerSettings: 10 x the taps, at least 10000).
        s.lambda = 1.0 - 1.0 / std::max(10000.0, 10.0 * s.tapsPerChannel);
        return s;
    }

    CpuFastRlsFilter long_, short_;
    std::vector<float> shortError_;
    double segLong_ = 0.0, segShort_ = 0.0;
    std::size_t inSegment_ = 0;
    bool shortLeads_ = false;
};

} // namespace

int fastRlsCompanionTaps(int taps)
{
    return taps >= 2048 ? taps / 2 : 0;
}

std::unique_ptr<LinearEchoFilter> makeCpuRlsFilter(const dsp::RlsSettings& settings, int threads)
{
    if (settings.channels == 1 && fastRlsCompanionTaps(settings.tapsPerChannel) > 0)
        return std::make_unique<CpuFastRlsPair>(settings);
    if (settings.channels == 1 && settings.tapsPerChannel >= 2)
        return std::make_unique<CpuFastRlsFilter>(settings);
    return std::make_unique<CpuRlsFilter>(settings, threads);
}

} // namespace quell::aec
