#pragma once
// The plugin's parameters (AudioProcessorValueTreeState) and how they map onto the echo canceller's
// settings. Parameter IDs are part of saved sessions: never rename them.
#include <juce_audio_processors/juce_audio_processors.h>

#include "aec/EchoCanceller.h"

namespace quell::plugin {

namespace ParamId {
inline constexpr const char* filterLength = "filterLength";
inline constexpr const char* forgetting = "forgetting";
inline constexpr const char* adaptation = "adaptation";
inline constexpr const char* suppression = "suppression";
inline constexpr const char* comfortNoise = "comfortNoise";
inline constexpr const char* backend = "backend";
inline constexpr const char* bypass = "bypass";
} // namespace ParamId

// Filter lengths offered, in taps at the canceller's 16 kHz rate (8 ms to 256 ms of echo tail).
inline constexpr int filterLengths[] = {128, 256, 512, 1024, 2048, 4096};
inline constexpr int defaultFilterLengthIndex = 3;   // 1024 taps = 64 ms

juce::AudioProcessorValueTreeState::ParameterLayout createParameterLayout();

// The settings the canceller should run with, read from the parameters' current values (any thread).
struct CancellerChoice {
    int taps = 1024;
    double lambda = 0.9999;
    aec::Backend backend = aec::Backend::Auto;
    bool operator==(const CancellerChoice&) const = default;
};

class ParameterReader {
public:
    explicit ParameterReader(juce::AudioProcessorValueTreeState& state);
    CancellerChoice choice() const noexcept;
    bool bypassed() const noexcept { return bypass_->load() >= 0.5f; }
    bool adapting() const noexcept { return adaptation_->load() >= 0.5f; }
    // Freeze, suppression and comfort noise: applied to the running engine without a rebuild.
    aec::CancellerControls controls() const noexcept;

private:
    std::atomic<float>* filterLength_;
    std::atomic<float>* forgetting_;
    std::atomic<float>* backend_;
    std::atomic<float>* bypass_;
    std::atomic<float>* adaptation_;
    std::atomic<float>* suppression_;
    std::atomic<float>* comfortNoise_;
};

aec::EchoCancellerSettings toSettings(const CancellerChoice& choice);

} // namespace quell::plugin
