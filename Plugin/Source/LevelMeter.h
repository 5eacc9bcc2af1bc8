// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A horizontal bar meter with its value written on it: input, far-end and output levels in dBFS, and
// the ERLE (echo return loss enhancement) in dB. Smoothed so it reads calmly at the editor's frame rate.
#include <juce_gui_basics/juce_gui_basics.h>

namespace quell::plugin {

class LevelMeter : public juce::Component {
public:
    LevelMeter(juce::String label, float minDb, float maxDb, juce::Colour colour);
    void setValue(float db, bool valid = true);
    void paint(juce::Graphics& g) override;

private:
    juce::String label_;
    float minDb_, maxDb_;
    juce::Colour colour_;
    float shown_ = -1000.0f;
    bool valid_ = false;
};

} // namespace quell::plugin
