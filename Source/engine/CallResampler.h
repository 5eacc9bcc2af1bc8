// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One call's samples between its own rate and a canceller that takes whole blocks at the canceller's rate
// (a stream of a many-calls engine: SharedCall, OfflineCallBatch). Microphone and far end are resampled
// down with the EchoPipeline's resamplers and gathered into blocks; the canceller's output blocks are
// resampled up and the pipeline's delay taken out, so that the output is an EchoPipeline's with the same
// canceller (quell-render's, its delay removed), sample for sample, whatever the sizes pushed.
//
// After k samples in, at most k are out. Silence pushed after the input's end brings out the rest.
// Memory: what is pushed and not yet in a block, and the outputs not yet taken.
//
// Threading: one thread.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dsp/PolyphaseResampler.h"

namespace quell::engine {

class CallResampler {
public:
    // Throws std::invalid_argument on a rate outside aec::kMinSampleRate..kMaxSampleRate or bad counts.
    void prepare(int hostRate, int cancellerRate, int micChannels, int farEndChannels, std::size_t block, int cancellerLatency);
    // prepare()'s checks alone, for a caller that checks before it sets up what it converts for.
    static void check(int hostRate, int micChannels, int farEndChannels, std::size_t block);

    // Host samples in: micChannels spans and farEndChannels spans, all of one length.
    void push(std::span<const std::span<const float>> mic, std::span<const std::span<const float>> far);
    // Silence after the input's end (not counted as input): pushed until outputComplete().
    void pushSilence(std::size_t frames);

    // The oldest whole block at the canceller's rate, while there is one.
    bool hasBlock() const { return blocksReady() > 0; }
    std::size_t blocksReady() const { return (micLow_.front().size() - lowPos_) / block_; }
    const float* micBlock(int channel) const { return micLow_[static_cast<std::size_t>(channel)].data() + lowPos_; }
    const float* farBlock(int channel) const { return farLow_[static_cast<std::size_t>(channel)].data() + lowPos_; }
    // The canceller's output for that block (micChannels blocks), which consumes it.
    void popBlock(std::span<const float* const> out);

    // Outputs ready to take: each microphone channel's (the same count), at most the input count.
    std::size_t outputReady() const;
    std::span<const float> output(int channel) const { return {ready_[static_cast<std::size_t>(channel)].data(), outputReady()}; }
    void consumeOutput(std::size_t frames);
    // Every sample pushed has its output taken or ready.
    bool outputComplete() const { return taken_ + outputReady() >= inputs_; }
    std::uint64_t inputFrames() const { return inputs_; }
    std::uint64_t outputFrames() const { return taken_; }

    // The pipeline's delay (resamplers and canceller) in host samples, taken out of the output.
    int delaySamples() const { return delay_; }
    // The most host samples an output can lag its input: the delay, and a block at the host rate.
    int holdSamples() const { return hold_; }
    int micChannels() const { return static_cast<int>(micLow_.size()); }
    int farEndChannels() const { return static_cast<int>(farLow_.size()); }
    std::size_t blockSamples() const { return block_; }

private:
    void append(dsp::PolyphaseResampler<float>& r, std::span<const float> in, std::vector<float>& low);
    bool resampling_ = false;
    std::size_t block_ = 0, lowPos_ = 0, toDrop_ = 0;
    int delay_ = 0, hold_ = 0;
    std::uint64_t inputs_ = 0, taken_ = 0;
    std::vector<dsp::PolyphaseResampler<float>> micDown_, farDown_, up_;
    std::vector<std::vector<float>> micLow_, farLow_, ready_;
    std::vector<float> upScratch_, silence_;
};

} // namespace quell::engine
