#include "aec/EchoCanceller.h"

#include <algorithm>

#include "aec/CpuFilterChoice.h"

namespace quell::aec {

void EchoCanceller::prepare(const EchoCancellerSettings& settings, std::size_t maxBlock)
{
    if (settings.sampleRate < 8000 || settings.sampleRate > 192000)
        throw std::invalid_argument("echo canceller rate must be between 8000 and 192000 Hz (got "
                                    + std::to_string(settings.sampleRate) + ")");
    if (maxBlock == 0)
        throw std::invalid_argument("echo canceller: maxBlock must be positive");
    dsp::RlsSettings rls;
    rls.taps = settings.taps;
    rls.lambda = settings.lambda;
    rls.delta = settings.delta;
    dsp::validate(rls);

    settings_ = settings;
    fallbackReason_.clear();
    filter_.reset();
    if (settings.backend != Backend::Cpu) {
        std::string whyNot;
        filter_ = makeGpuRlsFilter(rls, maxBlock, whyNot);
        if (!filter_) {
            if (settings.backend == Backend::Gpu)
                throw BackendUnavailable("--backend gpu: no usable GPU (" + whyNot + ")");
            fallbackReason_ = whyNot;
        }
    }
    if (!filter_ && settings.cpuRealtimeBudget > 0.0) {
        CpuFilterChoice choice = chooseRealtimeCpuFilter(rls, settings.sampleRate, settings.cpuRealtimeBudget);
        filter_ = std::move(choice.filter);
        description_ = choice.mode;
    } else {
        if (!filter_)
            filter_ = makeCpuRlsFilter(rls);
        description_ = filter_->description();
    }

    const dsp::Biquad hp = dsp::butterworthHighPass(settings.highPassHz, settings.sampleRate);
    micHighPass_.prepare(std::span<const dsp::Biquad>(&hp, 1));
    refHighPass_.prepare(std::span<const dsp::Biquad>(&hp, 1));
    maxBlock_ = maxBlock;
    micScratch_.assign(maxBlock, 0.0f);
    refScratch_.assign(maxBlock, 0.0f);
}

void EchoCanceller::reset()
{
    if (filter_)
        filter_->reset();
    micHighPass_.reset();
    refHighPass_.reset();
}

void EchoCanceller::process(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
{
    if (mic.size() != ref.size() || out.size() < mic.size())
        throw std::invalid_argument("EchoCanceller::process: mic, ref and out must have the same length");
    for (std::size_t pos = 0; pos < mic.size(); pos += maxBlock_) {
        const std::size_t n = std::min(maxBlock_, mic.size() - pos);
        std::span<float> m(micScratch_.data(), n), r(refScratch_.data(), n);
        micHighPass_.process(mic.subspan(pos, n), m);
        refHighPass_.process(ref.subspan(pos, n), r);
        filter_->process(m, r, out.subspan(pos, n));
    }
}

} // namespace quell::aec
