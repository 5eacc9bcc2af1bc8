// SPDX-License-Identifier: GPL-3.0-or-later
#include "LevelMeter.h"

#include <algorithm>

namespace quell::plugin {

LevelMeter::LevelMeter(juce::String label, float minDb, float maxDb, juce::Colour colour)
    : label_(std::move(label)), minDb_(minDb), maxDb_(maxDb), colour_(colour)
{
}

void LevelMeter::setValue(float db, bool valid)
{
    const float clamped = std::clamp(db, minDb_, maxDb_);
    // Fast attack, slower release: peaks show at once, the bar does not flicker.
    shown_ = shown_ < minDb_ || clamped > shown_ ? clamped : shown_ + 0.3f * (clamped - shown_);
    valid_ = valid;
    repaint();
}

void LevelMeter::paint(juce::Graphics& g)
{
    const auto bounds = getLocalBounds().toFloat();
    auto labelArea = bounds.withHeight(16.0f);
    auto bar = bounds.withTrimmedTop(18.0f);
    g.setColour(juce::Colours::white.withAlpha(0.8f));
    g.setFont(13.0f);
    g.drawText(label_, labelArea, juce::Justification::centredLeft);
    g.setColour(juce::Colour(0xff1b2230));
    g.fillRoundedRectangle(bar, 4.0f);
    if (valid_) {
        const float fraction = (std::max(shown_, minDb_) - minDb_) / (maxDb_ - minDb_);
        juce::ColourGradient gradient(colour_.darker(0.6f), bar.getX(), 0.0f, colour_.brighter(0.3f), bar.getRight(), 0.0f, false);
        g.setGradientFill(gradient);
        g.fillRoundedRectangle(bar.withWidth(std::max(4.0f, bar.getWidth() * fraction)), 4.0f);
    }
    g.setColour(juce::Colours::white);
    g.setFont(13.0f);
    const juce::String text = valid_ ? juce::String(shown_, 1) + " dB" : juce::String("--");
    g.drawText(text, bar.reduced(8.0f, 0.0f), juce::Justification::centredRight);
}

} // namespace quell::plugin
