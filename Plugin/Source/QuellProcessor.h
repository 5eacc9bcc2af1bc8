// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Quell plugin's audio processor: the microphone on the main bus, the far end (what the loudspeaker
// plays) on the sidechain; the real-time engine (Source/engine) cancels the far end's echo from the
// microphone on the GPU when there is one, else on the CPU.
//
// Threads:
//  - audio thread: processBlock() only hands samples to the engine (no allocation, lock or system call
//    in real-time mode; see RealtimeEngine.h), and mixes in the bypass path;
//  - the settings thread (SettingsThread.h) rebuilds the canceller off the audio thread when the filter
//    length, forgetting factor or backend change; the engine swaps it in between blocks;
//  - the message thread (editor) reads status and the echo path.
// Every engine control call (prepare, applySettings, stats) holds controlMutex_; process() never does.
//
// Offline rendering (the host's isNonRealtime(), e.g. a bounce or LV2 freewheeling): the engine runs
// without its worker thread, in the audio callback, with no deadlines, so a render never plays the dry
// fallback. Switching between the two re-prepares the engine in the callback; hosts switch between
// renders, and a render has no deadline to miss.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <juce_audio_processors/juce_audio_processors.h>

#include "QuellParameters.h"
#include "dsp/Crossfade.h"
#include "dsp/DelayLine.h"
#include "engine/RealtimeEngine.h"

namespace quell::plugin {

class SettingsThread;

// What the editor shows.
struct PluginStatus {
    bool prepared = false;
    engine::EngineStats stats{};
    std::string backendNote;   // why the GPU is not in use, when it is not
    double sampleRate = 0.0;
    int maxBlock = 0;
    int micChannels = 0;
    int farEndChannels = 0;
    int cancellerRate = 0;     // the rate the canceller (and the echo path's taps) run at
    bool offline = false;
    CancellerChoice applied{};
};

class QuellProcessor : public juce::AudioProcessor {
public:
    QuellProcessor();
    ~QuellProcessor() override;

    void prepareToPlay(double sampleRate, int maximumExpectedSamplesPerBlock) override;
    void releaseResources() override;
    bool isBusesLayoutSupported(const BusesLayout& layouts) const override;
    // Single precision only (supportsDoublePrecisionProcessing() is false, so hosts never call these).
    void processBlock(juce::AudioBuffer<double>& b, juce::MidiBuffer& m) override { AudioProcessor::processBlock(b, m); }
    void processBlockBypassed(juce::AudioBuffer<double>& b, juce::MidiBuffer& m) override { AudioProcessor::processBlockBypassed(b, m); }
    void processBlock(juce::AudioBuffer<float>&, juce::MidiBuffer&) override;
    void processBlockBypassed(juce::AudioBuffer<float>&, juce::MidiBuffer&) override;
    juce::AudioProcessorParameter* getBypassParameter() const override;

    juce::AudioProcessorEditor* createEditor() override;
    bool hasEditor() const override { return true; }

    const juce::String getName() const override { return "Quell"; }
    bool acceptsMidi() const override { return false; }
    bool producesMidi() const override { return false; }
    bool isMidiEffect() const override { return false; }
    double getTailLengthSeconds() const override;

    int getNumPrograms() override { return 1; }
    int getCurrentProgram() override { return 0; }
    void setCurrentProgram(int) override {}
    const juce::String getProgramName(int) override { return "Default"; }
    void changeProgramName(int, const juce::String&) override {}

    void getStateInformation(juce::MemoryBlock& destData) override;
    void setStateInformation(const void* data, int sizeInBytes) override;

    juce::AudioProcessorValueTreeState& parameters() { return state_; }
    PluginStatus status() const;                        // message thread
    bool echoPath(std::vector<float>& weights) const;   // message thread
    // Settings thread: rebuilds the canceller when the parameters ask for another one (debounced, so an
    // automation sweep of the filter length rebuilds once, not at every step).
    void applyPendingSettings();

private:
    static BusesProperties defaultBuses();
    void prepareEngine(double sampleRate, int maxBlock, bool offline);   // holds controlMutex_
    void applyChoiceLocked(const CancellerChoice& choice);
    // The safety blocks the parameter asks for at the prepared rate and block; set on the running engine
    // (no rebuild) with the new latency reported to the host. Both hold controlMutex_.
    int wantedSafetyBlocksLocked() const;
    void applySafetyBlocksLocked();
    void process(juce::AudioBuffer<float>& buffer, bool forceBypass) noexcept;

    juce::AudioProcessorValueTreeState state_;
    ParameterReader reader_;
    engine::RealtimeEngine engine_;
    dsp::DelayLine dryDelay_;   // the input by the reported latency: the bypass path
    mutable std::mutex controlMutex_;

    std::atomic<bool> engineReady_{false};
    std::atomic<bool> engineOffline_{false};
    int maxBlock_ = 0;
    int micChannels_ = 1;
    int farEndChannels_ = 0;        // the sidechain's, as prepared (0: none); the engine takes 2 where it is 2
    double sampleRate_ = 48000.0;
    std::vector<float> farEnd_;
    std::vector<std::vector<float>> wet_, dry_;
    dsp::Crossfade bypass_;         // 0: cancelled output, 1: delayed input

    // Control-thread state (under controlMutex_).
    CancellerChoice applied_{};
    CancellerChoice pending_{};
    juce::uint32 pendingSinceMs_ = 0;
    std::string backendNote_;
    aec::CancellerControls appliedControls_{};   // audio thread (and prepareToPlay)

    std::unique_ptr<SettingsThread> settingsThread_;

    JUCE_DECLARE_NON_COPYABLE_WITH_LEAK_DETECTOR(QuellProcessor)
};

} // namespace quell::plugin
