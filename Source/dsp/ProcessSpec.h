// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What a processor is prepared for, passed beside its settings (as juce::dsp::ProcessSpec): the rate it
// runs at, the most samples one process() call hands it, and how many channels it takes. The settings
// say how it behaves; the spec says what it is fed. A processor's own header says which channels count
// (the echo canceller: the far end's, its microphone being one channel).
#include <cstddef>

namespace quell::dsp {

struct ProcessSpec {
    int sampleRate = 16000;
    std::size_t maximumBlockSize = 0;
    int channels = 1;
};

} // namespace quell::dsp
