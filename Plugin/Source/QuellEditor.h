// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The editor: ERLE and level meters, the live echo path, the backend (GPU or CPU, and why), the
// late-block counter, and the parameters. It polls the processor at 15 Hz from the message thread.
#include <memory>
#include <vector>

#include <juce_audio_processors/juce_audio_processors.h>
#include <juce_gui_basics/juce_gui_basics.h>

#include "EchoPathPlot.h"
#include "LevelMeter.h"

namespace quell::plugin {

class QuellProcessor;

class QuellEditor : public juce::AudioProcessorEditor, private juce::Timer {
public:
    explicit QuellEditor(QuellProcessor& owner);
    ~QuellEditor() override;
    void paint(juce::Graphics& g) override;
    void resized() override;
    // The backend line as shown (tests and the screenshot tool read it).
    juce::String backendText() const { return backend_.getText(); }
    void refreshNow() { timerCallback(); }

private:
    void timerCallback() override;

    using SliderAttachment = juce::AudioProcessorValueTreeState::SliderAttachment;
    using ComboAttachment = juce::AudioProcessorValueTreeState::ComboBoxAttachment;
    using ButtonAttachment = juce::AudioProcessorValueTreeState::ButtonAttachment;

    QuellProcessor& processor_;
    LevelMeter erle_, mic_, farEnd_, out_;
    EchoPathPlot plot_;
    juce::Label backend_, counters_;
    juce::ComboBox length_, backendChoice_, safety_;
    juce::Slider forgetting_, suppression_;
    juce::ToggleButton forgettingAuto_{"Auto"}, adaptation_{"Adapt (off: freeze)"}, comfortNoise_{"Comfort noise"}, bypass_{"Bypass"};
    juce::Label lengthLabel_, backendLabel_, forgettingLabel_, suppressionLabel_, safetyLabel_, controlsHint_;
    std::unique_ptr<ComboAttachment> lengthAttachment_, backendAttachment_, safetyAttachment_;
    std::unique_ptr<SliderAttachment> forgettingAttachment_, suppressionAttachment_;
    std::unique_ptr<ButtonAttachment> forgettingAutoAttachment_, adaptationAttachment_, comfortNoiseAttachment_, bypassAttachment_;
    std::vector<float> weights_;
};

} // namespace quell::plugin
