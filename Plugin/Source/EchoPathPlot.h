// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A live plot of the estimated echo path: the adaptive filter's weights, i.e. the impulse response
// from the loudspeaker feed to the microphone as the canceller currently sees it, against time in ms.
// A clean peak at the acoustic delay followed by a decaying tail means the canceller has converged.
#include <vector>

#include <juce_gui_basics/juce_gui_basics.h>

namespace quell::plugin {

class EchoPathPlot : public juce::Component {
public:
    void setWeights(const std::vector<float>& weights, double sampleRate);
    void paint(juce::Graphics& g) override;

private:
    std::vector<float> weights_;
    double sampleRate_ = 16000.0;
};

} // namespace quell::plugin
