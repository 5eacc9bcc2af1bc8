// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One call of the process's SharedCallEngine at its own rate (a quellaec element's stream): a
// CallResampler around the engine's stream, so that its samples are an EchoPipeline's with the engine's
// canceller (quell-render's, the pipeline's delay removed): on the CPU the same samples; on the GPU the
// batch's filter's (SharedCallEngine.h says when a late call's differ).
//
// Output comes in whole blocks: after k samples in, at most k have come out, and finish() gives the rest.
//
// Threading: one thread at a time (a stream's); other calls of the same engine on their own threads.
#include <memory>
#include <span>
#include <vector>

#include "engine/CallResampler.h"
#include "engine/SharedCallEngine.h"

namespace quell::engine {

class SharedCall {
public:
    SharedCall() = default;
    ~SharedCall();
    SharedCall(const SharedCall&) = delete;
    SharedCall& operator=(const SharedCall&) = delete;

    // Joins an engine of these settings (their sampleRate: the canceller's) for a stream at hostRate,
    // with settings.engine.farEndChannels far-end channels. Throws std::invalid_argument on a bad rate,
    // and as SharedCallEngine::join.
    void open(const SharedCallSettings& settings, int hostRate);
    // Leaves the engine (the destructor too). The outputs not yet handed out are dropped.
    void close();
    bool isOpen() const { return static_cast<bool>(member_.engine); }

    // n host samples of microphone and of each far-end channel in; the outputs that are complete are
    // appended to out. Blocks while the engine runs this call's blocks. moreQueued: the caller holds
    // more input after these (it has fallen behind; SharedCallEngine.h says what the engine does).
    void process(std::span<const float> mic, std::span<const std::span<const float>> far, std::vector<float>& out, bool moreQueued = false);
    // After the last input: the remaining outputs (the delay flushed with silence), so that out has had
    // as many samples as went in.
    void finish(std::vector<float>& out);
    void setControls(const aec::CancellerControls& controls);

    // The pipeline's delay (resamplers and canceller) in host samples, taken out of the output.
    int delaySamples() const { return resampler_.delaySamples(); }
    // The most host samples an output can lag its input here, the delay and a block of the engine
    // included (not the engine's wait for the other calls: SharedCallSettings::batchWait).
    int holdSamples() const { return resampler_.holdSamples(); }
    const SharedCallEngine& engine() const { return *member_.engine; }
    // The engine, kept while the caller holds it (its figures after the calls have left).
    std::shared_ptr<const SharedCallEngine> engineHandle() const { return member_.engine; }
    int stream() const { return member_.stream; }

private:
    void runBlocks(std::vector<float>& out, bool moreQueued);

    SharedCallEngine::Membership member_;
    CallResampler resampler_;
    std::vector<float> outLow_;
};

} // namespace quell::engine
