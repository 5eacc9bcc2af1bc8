// SPDX-License-Identifier: GPL-3.0-or-later
#include "EchoPathPlot.h"

#include <algorithm>
#include <cmath>

namespace quell::plugin {

void EchoPathPlot::setWeights(const std::vector<float>& weights, double sampleRate)
{
    weights_ = weights;
    sampleRate_ = sampleRate;
    repaint();
}

void EchoPathPlot::paint(juce::Graphics& g)
{
    const auto area = getLocalBounds().toFloat();
    g.setColour(juce::Colour(0xff121821));
    g.fillRoundedRectangle(area, 6.0f);
    const auto plot = area.reduced(12.0f, 22.0f).withTrimmedBottom(4.0f);

    g.setColour(juce::Colours::white.withAlpha(0.8f));
    g.setFont(13.0f);
    g.drawText("Estimated echo path (filter impulse response)", area.reduced(12.0f, 4.0f).withHeight(16.0f),
               juce::Justification::centredLeft);

    if (weights_.empty()) {
        g.setColour(juce::Colours::white.withAlpha(0.4f));
        g.drawText("waiting for audio on the sidechain...", plot, juce::Justification::centred);
        return;
    }
    const double lengthMs = 1000.0 * static_cast<double>(weights_.size()) / sampleRate_;
    // Time grid: a line every 8 ms (or wider for long filters), labelled.
    const double stepMs = lengthMs <= 32.0 ? 4.0 : lengthMs <= 128.0 ? 8.0 : 32.0;
    g.setFont(11.0f);
    for (double t = 0.0; t <= lengthMs + 1e-9; t += stepMs) {
        const float x = plot.getX() + static_cast<float>(t / lengthMs) * plot.getWidth();
        g.setColour(juce::Colours::white.withAlpha(0.08f));
        g.drawVerticalLine(static_cast<int>(x), plot.getY(), plot.getBottom());
        g.setColour(juce::Colours::white.withAlpha(0.45f));
        g.drawText(juce::String(t, 0) + " ms", juce::Rectangle<float>(x - 20.0f, plot.getBottom() + 2.0f, 40.0f, 14.0f),
                   juce::Justification::centred);
    }
    g.setColour(juce::Colours::white.withAlpha(0.2f));
    g.drawHorizontalLine(static_cast<int>(plot.getCentreY()), plot.getX(), plot.getRight());

    float peak = 1e-9f;
    for (float w : weights_)
        peak = std::max(peak, std::abs(w));
    juce::Path path;
    const std::size_t n = weights_.size();
    // Draw at most two points per pixel column (min and max of the taps under it) so long filters stay legible.
    const int columns = std::max(1, static_cast<int>(plot.getWidth()));
    bool started = false;
    for (int col = 0; col < columns; ++col) {
        const std::size_t a = n * static_cast<std::size_t>(col) / static_cast<std::size_t>(columns);
        const std::size_t b = std::max(a + 1, n * static_cast<std::size_t>(col + 1) / static_cast<std::size_t>(columns));
        float lo = weights_[a], hi = weights_[a];
        for (std::size_t i = a; i < std::min(b, n); ++i) {
            lo = std::min(lo, weights_[i]);
            hi = std::max(hi, weights_[i]);
        }
        const float x = plot.getX() + static_cast<float>(col);
        const float yHi = plot.getCentreY() - 0.48f * plot.getHeight() * hi / peak;
        const float yLo = plot.getCentreY() - 0.48f * plot.getHeight() * lo / peak;
        if (!started) {
            path.startNewSubPath(x, yHi);
            started = true;
        } else {
            path.lineTo(x, yHi);
        }
        path.lineTo(x, yLo);
    }
    g.setColour(juce::Colour(0xff4fc3f7));
    g.strokePath(path, juce::PathStrokeType(1.2f));
    g.setColour(juce::Colours::white.withAlpha(0.5f));
    g.drawText(juce::String(static_cast<int>(n)) + " taps, peak " + juce::String(peak, 3),
               area.reduced(12.0f, 4.0f).withHeight(16.0f), juce::Justification::centredRight);
}

} // namespace quell::plugin
