// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The plugin's parameters (AudioProcessorValueTreeState) and how they map onto the echo canceller's
// settings. Parameter IDs are part of saved sessions: never rename them.
#include <iterator>
#include <string>

#include <juce_audio_processors/juce_audio_processors.h>

#include "aec/EchoCanceller.h"

namespace quell::plugin {

namespace ParamId {
inline constexpr const char* filterLength = "filterLength";
inline constexpr const char* forgetting = "forgetting";
inline constexpr const char* forgettingAuto = "forgettingAuto";
inline constexpr const char* adaptation = "adaptation";
inline constexpr const char* suppression = "suppression";
inline constexpr const char* comfortNoise = "comfortNoise";
inline constexpr const char* backend = "backend";
inline constexpr const char* bypass = "bypass";
inline constexpr const char* safetyBlocks = "safetyBlocks";
} // namespace ParamId

// Safety blocks (RealtimeEngine::setSafetyBlocks): "Automatic" (engine::automaticSafetyBlocks: one for
// host blocks under 4 ms, else none), then 0 to 4. Each adds a host block of latency, reported to the
// host, and a block period more for the canceller to deliver in.
inline constexpr int safetyBlockChoices = 5;   // 0..4 after "Automatic"


// Filter lengths offered, in taps at the canceller's 16 kHz rate (8 ms to 256 ms of echo tail), then
// "Automatic" (the canceller's choice: 256 ms where the GPU or the CPU's Kalman filter affords it in
// real time), the default. Appended last so sessions saved with a fixed length keep it.
inline constexpr int filterLengths[] = {128, 256, 512, 1024, 2048, 4096};
inline constexpr int automaticFilterLengthIndex = static_cast<int>(std::size(filterLengths));
inline constexpr int defaultFilterLengthIndex = automaticFilterLengthIndex;

juce::AudioProcessorValueTreeState::ParameterLayout createParameterLayout();

// The settings the canceller should run with, read from the parameters' current values (any thread).
struct CancellerChoice {
    int taps = 0;          // 0: automatic
    double lambda = 0.0;   // 0: automatic (aec::effectiveLambda)
    aec::Backend backend = aec::Backend::Auto;   // as the user picked it (GPU runs as Auto: toSettings)
    bool operator==(const CancellerChoice&) const = default;
};

class ParameterReader {
public:
    explicit ParameterReader(juce::AudioProcessorValueTreeState& state);
    CancellerChoice choice() const noexcept;
    bool bypassed() const noexcept { return bypass_->load() >= 0.5f; }
    bool adapting() const noexcept { return adaptation_->load() >= 0.5f; }
    // -1: automatic; else 0..4.
    int safetyBlocks() const noexcept;
    // Freeze, suppression and comfort noise: applied to the running engine without a rebuild.
    aec::CancellerControls controls() const noexcept;

private:
    std::atomic<float>* filterLength_;
    std::atomic<float>* forgetting_;
    std::atomic<float>* forgettingAuto_;
    std::atomic<float>* backend_;
    std::atomic<float>* bypass_;
    std::atomic<float>* adaptation_;
    std::atomic<float>* suppression_;
    std::atomic<float>* comfortNoise_;
    std::atomic<float>* safetyBlocks_;
};

// The canceller's settings for a choice. "GPU" is Auto: the canceller falls back to the CPU when the GPU
// cannot run, and backendNote() says so, rather than the plugin failing to start.
// offline (a bounce): no deadline, so the CPU runs the filter it runs in quell-render (RLS at the
// length asked, 1024 taps when automatic), not the one that fits half a core in real time.
aec::EchoCancellerSettings toSettings(const CancellerChoice& choice, bool offline);
// What the editor shows about where the filter runs: empty when it runs where asked.
std::string backendNote(const CancellerChoice& choice, const std::string& fallbackReason);

} // namespace quell::plugin
