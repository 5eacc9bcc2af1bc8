// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The signal path at the host rate: resample microphone and far end to the echo canceller's rate,
// cancel, resample back. Every call takes n host samples and returns n, delayed by a constant latency
// (the two resamplers' group delays and the residual echo suppressor's frame), which latencySamples()
// reports exactly.
//
// Microphone channels (1 or 2) each get their own echo canceller; the far end has farEndChannels
// channels (1 or 2), every canceller sees all of them (a stereo far end is one two-channel echo path per
// microphone; see aec/EchoCanceller.h).
// Threading: prepare()/reset() off the audio thread; process() from one thread; no allocation in process().
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "aec/EchoCanceller.h"
#include "dsp/PolyphaseResampler.h"

namespace quell::engine {

struct PipelineSpec {
    int hostRate = 48000;
    int micChannels = 1;
    int farEndChannels = 1;
    std::size_t maxBlock = 4096;        // host samples per process() call, at most
    int cancellerRate = aec::kCancellerRate;   // the cancellers run here (resampled when the host's differs)
    aec::EchoCancellerSettings aec{};
};

// The pipeline's input-to-output delay in host samples: the down-resampler's and the canceller's delays at
// the canceller's rate, brought to the host's, and the up-resampler's (EchoPipeline and OfflineCallBatch).
double pipelineLatency(const dsp::PolyphaseResampler<float>& down, const dsp::PolyphaseResampler<float>& up, int cancellerLatency,
                       int hostRate, int cancellerRate);

class EchoPipeline {
public:
    void prepare(const PipelineSpec& spec);
    void reset();
    // Run-time controls of every channel's canceller (freeze, suppression, comfort noise); from the
    // thread that calls process(), between calls. No allocation.
    void setControls(const aec::CancellerControls& controls);

    // mic: micChannels planar spans of n samples; refs: farEndChannels spans of n; out: micChannels
    // spans of n.
    void process(std::span<const std::span<const float>> mic, std::span<const std::span<const float>> refs,
                 std::span<const std::span<float>> out);
    // One far-end channel.
    void process(std::span<const std::span<const float>> mic, std::span<const float> ref,
                 std::span<const std::span<float>> out);

    // Input-to-output delay in host samples, rounded to the nearest sample (fractional only for
    // rate pairs such as 44.1 kHz <-> 16 kHz, where it is off by at most half a sample).
    int latencySamples() const { return latency_; }
    double latencyExact() const { return latencyExact_; }
    const aec::EchoCanceller& canceller(int channel = 0) const { return *channels_[static_cast<std::size_t>(channel)].aec; }
    bool resampling() const { return resampling_; }

private:
    static void warmUp(aec::EchoCanceller& canceller, std::size_t block);
    struct Channel {
        std::unique_ptr<aec::EchoCanceller> aec;
        dsp::PolyphaseResampler<float> down, up;
        std::vector<float> fifo;     // upsampled output not yet handed out
        std::size_t fifoFill = 0;
    };
    PipelineSpec spec_{};
    bool resampling_ = false;
    int latency_ = 0;
    double latencyExact_ = 0.0;
    std::vector<Channel> channels_;
    dsp::PolyphaseResampler<float> refDown_[aec::kMaxFarEndChannels];
    std::vector<float> refLow_[aec::kMaxFarEndChannels];
    std::vector<float> micLow_, outLow_, upScratch_;
};

} // namespace quell::engine
