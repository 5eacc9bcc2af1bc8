// SPDX-License-Identifier: GPL-3.0-or-later
#include "QuellParameters.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace quell::plugin {

juce::AudioProcessorValueTreeState::ParameterLayout createParameterLayout()
{
    using namespace juce;
    AudioProcessorValueTreeState::ParameterLayout layout;

    StringArray lengths;
    for (int taps : filterLengths)
        lengths.add(String(taps) + " taps (" + String(taps / 16) + " ms)");
    lengths.add("Automatic");
    layout.add(std::make_unique<AudioParameterChoice>(ParameterID{ParamId::filterLength, 1}, "Filter length", lengths,
                                                      defaultFilterLengthIndex));

    // Forgetting factor lambda: memory 1/(1-lambda) samples at 16 kHz, from 62 ms (0.999) to 6 s (0.99999).
    // Skewed so the useful range near 1 gets most of the travel.
    NormalisableRange<float> lambdaRange(0.999f, 0.99999f, 0.00001f);
    lambdaRange.setSkewForCentre(0.9999f);
    layout.add(std::make_unique<AudioParameterFloat>(
        ParameterID{ParamId::forgetting, 1}, "Forgetting factor", lambdaRange, 0.9999f,
        AudioParameterFloatAttributes().withStringFromValueFunction([](float v, int) { return String(v, 5); })));
    // On (the default): the canceller's automatic forgetting factor, a memory of 10 x the filter's taps
    // (0.99998 at 4096 taps), and the slider above is not used.
    layout.add(std::make_unique<AudioParameterBool>(ParameterID{ParamId::forgettingAuto, 1}, "Automatic forgetting", true));

    layout.add(std::make_unique<AudioParameterBool>(ParameterID{ParamId::adaptation, 1}, "Adaptation", true,
                                                    AudioParameterBoolAttributes().withStringFromValueFunction(
                                                        [](bool on, int) { return on ? String("Adapt") : String("Freeze"); })));

    layout.add(std::make_unique<AudioParameterFloat>(ParameterID{ParamId::suppression, 1}, "Residual suppression",
                                                     NormalisableRange<float>(0.0f, 60.0f, 0.1f), static_cast<float>(quell::aec::kDefaultSuppressionDb),
                                                     AudioParameterFloatAttributes().withLabel("dB")));

    layout.add(std::make_unique<AudioParameterBool>(ParameterID{ParamId::comfortNoise, 1}, "Comfort noise", true));

    layout.add(std::make_unique<AudioParameterChoice>(ParameterID{ParamId::backend, 1}, "Backend",
                                                      StringArray{"Auto", "GPU", "CPU"}, 0));

    layout.add(std::make_unique<AudioParameterBool>(ParameterID{ParamId::bypass, 1}, "Bypass", false));

    StringArray safety{"Automatic"};
    for (int n = 0; n < safetyBlockChoices; ++n)
        safety.add(String(n));
    layout.add(std::make_unique<AudioParameterChoice>(ParameterID{ParamId::safetyBlocks, 1}, "Safety blocks", safety, 0));
    return layout;
}

ParameterReader::ParameterReader(juce::AudioProcessorValueTreeState& state)
    : filterLength_(state.getRawParameterValue(ParamId::filterLength)),
      forgetting_(state.getRawParameterValue(ParamId::forgetting)),
      forgettingAuto_(state.getRawParameterValue(ParamId::forgettingAuto)),
      backend_(state.getRawParameterValue(ParamId::backend)),
      bypass_(state.getRawParameterValue(ParamId::bypass)),
      adaptation_(state.getRawParameterValue(ParamId::adaptation)),
      suppression_(state.getRawParameterValue(ParamId::suppression)),
      comfortNoise_(state.getRawParameterValue(ParamId::comfortNoise)),
      safetyBlocks_(state.getRawParameterValue(ParamId::safetyBlocks))
{
}

int ParameterReader::safetyBlocks() const noexcept
{
    return std::clamp(static_cast<int>(std::lround(safetyBlocks_->load())), 0, safetyBlockChoices) - 1;
}

aec::CancellerControls ParameterReader::controls() const noexcept
{
    aec::CancellerControls c;
    c.adapt = adapting();
    // Rounded to the parameter's 0.1 dB step, so float noise never looks like a change.
    c.suppressionDb = std::round(static_cast<double>(suppression_->load()) * 10.0) / 10.0;
    c.comfortNoise = comfortNoise_->load() >= 0.5f;
    return c;
}

CancellerChoice ParameterReader::choice() const noexcept
{
    CancellerChoice c;
    const int index = std::clamp(static_cast<int>(std::lround(filterLength_->load())), 0, automaticFilterLengthIndex);
    c.taps = index == automaticFilterLengthIndex ? 0 : filterLengths[index];
    // Rounded to the parameter's step so float noise in the stored value never looks like a change.
    c.lambda = forgettingAuto_->load() >= 0.5f ? 0.0 : std::round(static_cast<double>(forgetting_->load()) * 1e5) / 1e5;
    switch (static_cast<int>(std::lround(backend_->load()))) {
    case 1: c.backend = aec::Backend::Gpu; break;
    case 2: c.backend = aec::Backend::Cpu; break;
    default: c.backend = aec::Backend::Auto; break;
    }
    return c;
}

aec::EchoCancellerSettings toSettings(const CancellerChoice& choice, bool offline)
{
    aec::EchoCancellerSettings s;
    s.taps = choice.taps;
    s.lambda = choice.lambda;
    s.backend = choice.backend == aec::Backend::Gpu ? aec::Backend::Auto : choice.backend;
    // In real time half a core: on the CPU the canceller picks the filter it can afford (see
    // aec/CpuFilterChoice.h) rather than missing deadlines. A bounce has no deadline.
    s.cpuRealtimeBudget = offline ? 0.0 : 0.5;
    return s;
}

std::string backendNote(const CancellerChoice& choice, const std::string& fallbackReason)
{
    if (fallbackReason.empty())
        return {};
    if (choice.backend == aec::Backend::Gpu)
        return "GPU requested but not usable (" + fallbackReason + "): running on the CPU";
    return "no GPU: " + fallbackReason;
}

} // namespace quell::plugin
