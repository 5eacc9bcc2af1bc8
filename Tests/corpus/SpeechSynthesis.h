// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Speech excitation for the corpus from espeak-ng (a Debian package): each utterance is spoken to a
// WAV file by the espeak-ng program (22050 Hz), read back with quell's WAV reader and resampled with
// quell's polyphase resampler to the corpus rate, group delay removed and edges trimmed.
#include <filesystem>
#include <string>
#include <vector>

namespace quell::corpus {

struct Utterance {
    std::string text;
    std::string voice = "en+m3";  // espeak-ng voice and variant: en+m3, en+f3, en-us+m1, ...
    int wordsPerMinute = 160;
    int pitch = 50;               // espeak-ng -p, 0..99
};

// Throws std::runtime_error with an installation hint when the espeak-ng program is not on PATH.
void requireEspeak();

// Speaks one utterance. Scratch files go in a private temporary folder that is removed afterwards.
// Throws std::runtime_error if espeak-ng fails or writes nothing.
std::vector<double> synthesize(const Utterance& utterance, int sampleRate);

} // namespace quell::corpus
