// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the plugin tests share as a host: running signals through a loaded plugin block by block,
// finding its parameters by name, and letting JUCE's message loop deliver what it queued.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <juce_audio_processors/juce_audio_processors.h>

namespace quell::test {

inline void pump(int ms) { juce::MessageManager::getInstance()->runDispatchLoopUntil(ms); }

inline juce::AudioProcessorParameter* findParameter(juce::AudioPluginInstance& plugin, const juce::String& name)
{
    for (auto* p : plugin.getParameters())
        if (p->getName(64) == name)
            return p;
    return nullptr;
}

// Runs `mic` and `farEnd` through the plugin in blocks chosen by `nextBlock`, returns the output. With
// `farEndRight`, a stereo sidechain's second channel gets it instead of `farEnd`.
template <class NextBlock>
std::vector<float> run(juce::AudioPluginInstance& plugin, const std::vector<float>& mic, const std::vector<float>& farEnd,
                       NextBlock nextBlock, juce::AudioBuffer<float>& buffer, bool* finite = nullptr, bool* noDenormals = nullptr,
                       const std::vector<float>* farEndRight = nullptr)
{
    juce::MidiBuffer midi;
    std::vector<float> out(mic.size(), 0.0f);
    const int totalIn = plugin.getTotalNumInputChannels();
    for (std::size_t pos = 0; pos < mic.size();) {
        const int len = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(nextBlock()), mic.size() - pos));
        buffer.setSize(std::max(totalIn, plugin.getTotalNumOutputChannels()), len, false, false, true);
        buffer.clear();
        // Main bus: the microphone (on every channel); sidechain bus: the far end (on every channel, or
        // farEndRight on its second).
        const int mainIn = plugin.getMainBusNumInputChannels();
        for (int c = 0; c < totalIn; ++c) {
            const float* from = c < mainIn ? mic.data() : c == mainIn + 1 && farEndRight ? farEndRight->data() : farEnd.data();
            buffer.copyFrom(c, 0, from + pos, len);
        }
        plugin.processBlock(buffer, midi);
        // A stereo microphone with the same signal on both channels must come out the same on both.
        for (int c = 1; c < plugin.getMainBusNumOutputChannels(); ++c)
            for (int i = 0; i < len; ++i)
                if (buffer.getSample(c, i) != buffer.getSample(0, i) && finite)
                    *finite = false;
        const float* o = buffer.getReadPointer(0);
        for (int i = 0; i < len; ++i) {
            if (finite && !std::isfinite(o[i]))
                *finite = false;
            if (noDenormals && std::fpclassify(o[i]) == FP_SUBNORMAL)
                *noDenormals = false;
            out[pos + static_cast<std::size_t>(i)] = o[i];
        }
        pos += static_cast<std::size_t>(len);
    }
    return out;
}

} // namespace quell::test
