// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Rebuilds the echo canceller off the audio thread: every 50 ms it asks the processor to apply
// parameter changes (filter length, forgetting factor, backend). Building a canceller allocates, may
// measure the CPU, and may set up the GPU: none of that may happen in the audio callback. The engine
// swaps the new canceller in between blocks.
#include <juce_core/juce_core.h>

namespace quell::plugin {

class QuellProcessor;

class SettingsThread : public juce::Thread {
public:
    explicit SettingsThread(QuellProcessor& processor) : juce::Thread("Quell settings"), processor_(processor) {}
    void run() override;

private:
    QuellProcessor& processor_;
};

} // namespace quell::plugin
