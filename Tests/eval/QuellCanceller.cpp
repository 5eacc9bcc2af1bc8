// SPDX-License-Identifier: GPL-3.0-or-later
// Quell's echo canceller (Source/aec/EchoCanceller), offline (no real-time budget): the float32 RLS on
// the CPU by default, on the GPU with --backend gpu (the same recursion; a stereo far end as two channels
// on either, or mixed down with --downmix).
#include "aec/EchoCanceller.h"
#include "dsp/BiquadCascade.h"
#include "eval/EvalCanceller.h"

namespace quell::eval {

std::vector<float> downmix(const std::vector<std::vector<float>>& ref)
{
    std::vector<float> mono(ref.at(0).size(), 0.0f);
    for (const auto& ch : ref)
        for (std::size_t n = 0; n < mono.size(); ++n)
            mono[n] += ch[n] / static_cast<float>(ref.size());
    return mono;
}

namespace {

class QuellCanceller final : public EvalCanceller {
public:
    explicit QuellCanceller(const QuellOptions& o) : options_(o) {}
    std::string name() const override { return "quell"; }
    std::string description() const override { return description_; }

    std::vector<float> run(const std::vector<float>& mic, const std::vector<std::vector<float>>& ref,
                           int sampleRate) override
    {
        const aec::EchoCancellerSettings& s = options_.settings;
        // A stereo far end is one multichannel echo path: both loudspeaker channels go to the filter.
        const int farEndChannels = options_.multichannel && ref.size() == 2 ? 2 : 1;
        aec::EchoCanceller aec;
        constexpr std::size_t block = 256;
        aec.prepare(s, {sampleRate, block, farEndChannels});
        description_ = "Quell EchoCanceller: " + aec.backendDescription();
        if (aec::isRls(aec.plan().engine))
            description_ += ", lambda " + std::to_string(aec.plan().rls.lambda).substr(0, 8);   // (the plan's: an automatic length resolved)
        // The suppressor delays the output by a fixed frame: run that many samples of silence on and
        // return the output aligned with the microphone.
        const std::size_t latency = static_cast<std::size_t>(aec.latencySamples());
        std::vector<std::vector<float>> x = farEndChannels == 1 ? std::vector<std::vector<float>>{downmix(ref)} : ref;
        std::vector<float> d = mic;
        for (auto& channel : x)
            channel.resize(mic.size() + latency, 0.0f);
        d.resize(mic.size() + latency, 0.0f);
        std::vector<float> out(d.size());
        for (std::size_t pos = 0; pos < d.size(); pos += block) {
            const std::size_t n = std::min(block, d.size() - pos);
            std::span<const float> refs[aec::kMaxFarEndChannels];
            for (std::size_t c = 0; c < x.size(); ++c)
                refs[c] = std::span<const float>(x[c]).subspan(pos, n);
            aec.process(std::span(d).subspan(pos, n), std::span<const std::span<const float>>(refs, x.size()),
                        std::span(out).subspan(pos, n));
        }
        // What the canceller found: the delay it applied, plus the echo's lag within the taps where a filter
        // long enough to cover it left the far end where it was.
        lastDelayMs_ = 1000.0 * (aec.alignedDelaySamples() + aec.echoLagSamples()) / sampleRate;
        lastReinits_ = static_cast<long>(aec.health().reinitialisations);
        out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(latency));
        return out;
    }

    // The far-end delay Quell found at the end of the last run (applied, and the echo's lag within the taps).
    double lastDelayFoundMs() const override { return lastDelayMs_; }
    long lastReinitialisations() const override { return lastReinits_; }

    void frontEnd(std::vector<float>& signal, int sampleRate) const override
    {
        const dsp::Biquad hp = dsp::butterworthHighPass(options_.settings.highPassHz, sampleRate);
        dsp::BiquadCascade<float> f;
        f.prepare(std::span<const dsp::Biquad>(&hp, 1));
        f.process(signal, signal);
    }

private:
    QuellOptions options_;
    double lastDelayMs_ = 0.0;
    long lastReinits_ = 0;
    std::string description_ = "Quell EchoCanceller (CPU)";
};

} // namespace

std::unique_ptr<EvalCanceller> makeQuellCanceller(const QuellOptions& options)
{
    return std::make_unique<QuellCanceller>(options);
}

} // namespace quell::eval
