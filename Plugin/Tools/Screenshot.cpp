// SPDX-License-Identifier: GPL-3.0-or-later
// quell-plugin-screenshot OUT.png: runs the plugin's processor on a simulated room echo (noise far end
// through a decaying random echo path), opens its editor and saves a picture of it. Run it under
// xvfb-run where there is no display. Prints the editor's backend line (e.g. that no GPU is present).
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <juce_audio_processors/juce_audio_processors.h>
#include <juce_gui_basics/juce_gui_basics.h>

#include "QuellEditor.h"
#include "QuellProcessor.h"

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: quell-plugin-screenshot OUT.png\n");
        return 2;
    }
    juce::ScopedJuceInitialiser_GUI gui;
    const double rate = 48000.0;
    const int block = 256;
    quell::plugin::QuellProcessor processor;
    processor.setNonRealtime(true);   // no deadlines: the picture does not depend on this machine's speed
    if (auto* length = processor.parameters().getParameter(quell::plugin::ParamId::filterLength))
        length->setValueNotifyingHost(length->convertTo0to1(1.0f));   // 256 taps: fast on any CPU
    processor.prepareToPlay(rate, block);

    // Echo path: 1 ms of flight, then a 4 ms tail decaying 40 dB (fits even a 128-tap, 8 ms filter).
    std::mt19937 rng(7);
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::vector<float> path(static_cast<std::size_t>(0.005 * rate), 0.0f);
    for (std::size_t i = static_cast<std::size_t>(0.001 * rate); i < path.size(); ++i)
        path[i] = 0.3f * gauss(rng) * std::pow(10.0f, -2.0f * static_cast<float>(i) / static_cast<float>(path.size()));
    std::vector<float> history(path.size(), 0.0f);
    std::size_t pos = 0;
    float lowPass = 0.0f;

    juce::AudioBuffer<float> buffer(2, block);
    juce::MidiBuffer midi;
    const int blocks = static_cast<int>(4.0 * rate / block);
    for (int b = 0; b < blocks; ++b) {
        for (int i = 0; i < block; ++i) {
            lowPass += 0.5f * (0.2f * gauss(rng) - lowPass);   // gently coloured far end
            history[pos] = lowPass;
            float echo = 0.0f;
            for (std::size_t k = 0; k < path.size(); ++k)
                echo += path[k] * history[(pos + path.size() - k) % path.size()];
            pos = (pos + 1) % path.size();
            buffer.setSample(0, i, echo + 0.001f * gauss(rng));
            buffer.setSample(1, i, lowPass);
        }
        processor.processBlock(buffer, midi);
    }

    std::unique_ptr<juce::AudioProcessorEditor> editor(processor.createEditor());
    auto* quellEditor = dynamic_cast<quell::plugin::QuellEditor*>(editor.get());
    for (int i = 0; i < 20; ++i)
        quellEditor->refreshNow();   // let the meters' smoothing settle
    const juce::Image image = editor->createComponentSnapshot(editor->getLocalBounds(), true, 1.0f);
    juce::File out = juce::File::getCurrentWorkingDirectory().getChildFile(argv[1]);
    out.deleteFile();
    juce::FileOutputStream stream(out);
    juce::PNGImageFormat png;
    if (!stream.openedOk() || !png.writeImageToStream(image, stream)) {
        std::fprintf(stderr, "could not write %s\n", argv[1]);
        return 1;
    }
    std::printf("backend: %s\nwrote %s (%dx%d)\n", quellEditor->backendText().toRawUTF8(), out.getFullPathName().toRawUTF8(),
                image.getWidth(), image.getHeight());
    editor.reset();
    processor.releaseResources();
    return 0;
}
