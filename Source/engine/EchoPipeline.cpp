// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/EchoPipeline.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace quell::engine {

// The first call into a GPU canceller loads its kernels and touches fresh pages (milliseconds): pay that
// here, at prepare, rather than in the first real-time block.
double pipelineLatency(const dsp::PolyphaseResampler<float>& down, const dsp::PolyphaseResampler<float>& up, int cancellerLatency,
                       int hostRate, int cancellerRate)
{
    return (down.delayInOutputSamples() + cancellerLatency) * hostRate / cancellerRate + up.delayInOutputSamples();
}

void EchoPipeline::warmUp(aec::EchoCanceller& canceller, std::size_t block)
{
    std::vector<float> zeros(std::min<std::size_t>(block, 256), 0.0f), out(zeros.size());
    const std::span<const float> refs[aec::kMaxFarEndChannels] = {zeros, zeros};
    canceller.process(zeros, std::span<const std::span<const float>>(refs, static_cast<std::size_t>(canceller.spec().channels)),
                      out);
    canceller.reset();
}

void EchoPipeline::prepare(const PipelineSpec& spec)
{
    if (spec.micChannels < 1 || spec.micChannels > 2)
        throw std::invalid_argument("the echo pipeline supports 1 or 2 microphone channels (got "
                                    + std::to_string(spec.micChannels) + ")");
    if (spec.hostRate < 8000 || spec.hostRate > 384000)
        throw std::invalid_argument("host sample rate " + std::to_string(spec.hostRate) + " Hz is not supported");
    if (spec.maxBlock == 0)
        throw std::invalid_argument("maxBlock must be positive");
    spec_ = spec;
    resampling_ = spec.hostRate != spec.cancellerRate;

    const std::size_t lowMax = resampling_
        ? static_cast<std::size_t>(std::ceil(static_cast<double>(spec.maxBlock) * spec.cancellerRate / spec.hostRate)) + 2
        : spec.maxBlock;
    channels_.clear();
    channels_.resize(static_cast<std::size_t>(spec.micChannels));
    // The channels' cancellers run one after the other on the caller's thread (the engine's one worker),
    // so a real-time CPU budget is theirs together: each plans its filter against its share. Before, each
    // took the whole: a stereo microphone with a stereo far end planned two stereo filters of 0.34 to
    // 0.38 of a core each here, 0.7 of a core on one thread against a budget of half a core.
    aec::EchoCancellerSettings settings = spec.aec;
    settings.cpuRealtimeBudget /= spec.micChannels;
    for (Channel& c : channels_) {
        c.aec = std::make_unique<aec::EchoCanceller>();
        c.aec->prepare(settings, {spec.cancellerRate, lowMax, spec.farEndChannels});
        warmUp(*c.aec, lowMax);
        if (resampling_) {
            c.down.prepare(spec.hostRate, spec.cancellerRate);
            c.up.prepare(spec.cancellerRate, spec.hostRate);
        }
        // Surplus: the up-resampler can run a few samples ahead of the input count (see process()).
        c.fifo.assign(spec.maxBlock + c.up.maxOutput(lowMax) + 8, 0.0f);
        c.fifoFill = 0;
    }
    if (resampling_) {
        for (auto& r : refDown_)
            r.prepare(spec.hostRate, spec.cancellerRate);
        latencyExact_ = pipelineLatency(channels_[0].down, channels_[0].up, channels_[0].aec->latencySamples(), spec.hostRate,
                                        spec.cancellerRate);
    } else {
        latencyExact_ = channels_[0].aec->latencySamples();
    }
    latency_ = static_cast<int>(std::lround(latencyExact_));
    const std::size_t lowSize = refDown_[0].maxOutput(spec.maxBlock) + 1;
    for (auto& r : refLow_)
        r.assign(lowSize, 0.0f);
    micLow_.assign(lowSize, 0.0f);
    outLow_.assign(lowSize, 0.0f);
    upScratch_.assign(channels_[0].up.maxOutput(lowSize) + 1, 0.0f);
}

void EchoPipeline::setControls(const aec::CancellerControls& controls)
{
    for (Channel& c : channels_)
        c.aec->setControls(controls);
}

void EchoPipeline::reset()
{
    for (Channel& c : channels_) {
        c.aec->reset();
        c.down.reset();
        c.up.reset();
        c.fifoFill = 0;
    }
    for (auto& r : refDown_)
        r.reset();
}

void EchoPipeline::process(std::span<const std::span<const float>> mic, std::span<const float> ref,
                           std::span<const std::span<float>> out)
{
    const std::span<const float> refs[1] = {ref};
    process(mic, std::span<const std::span<const float>>(refs), out);
}

void EchoPipeline::process(std::span<const std::span<const float>> mic, std::span<const std::span<const float>> refs,
                           std::span<const std::span<float>> out)
{
    if (refs.size() != static_cast<std::size_t>(spec_.farEndChannels) || refs.empty())
        throw std::invalid_argument("EchoPipeline::process: wrong number of far-end channels");
    const std::size_t n = refs[0].size();
    if (mic.size() != channels_.size() || out.size() != channels_.size())
        throw std::invalid_argument("EchoPipeline::process: wrong number of channels");
    if (n > spec_.maxBlock)
        throw std::invalid_argument("EchoPipeline::process: block larger than maxBlock");
    if (!resampling_) {
        for (std::size_t c = 0; c < channels_.size(); ++c)
            channels_[c].aec->process(mic[c].first(n), refs, out[c].first(n));
        return;
    }
    std::size_t lowCount = 0;
    std::span<const float> refsLow[aec::kMaxFarEndChannels];
    for (std::size_t r = 0; r < refs.size(); ++r) {
        lowCount = refDown_[r].process(refs[r].first(n), refLow_[r]);
        refsLow[r] = std::span<const float>(refLow_[r].data(), lowCount);
    }
    for (std::size_t c = 0; c < channels_.size(); ++c) {
        Channel& ch = channels_[c];
        const std::size_t micCount = ch.down.process(mic[c].first(n), micLow_);
        // Identical resamplers fed the same number of samples emit the same number of samples.
        if (micCount != lowCount)
            throw std::logic_error("EchoPipeline: resampler counts diverged");
        ch.aec->process(std::span<const float>(micLow_.data(), lowCount),
                        std::span<const std::span<const float>>(refsLow, refs.size()), std::span<float>(outLow_.data(), lowCount));
        const std::size_t upCount = ch.up.process(std::span<const float>(outLow_.data(), lowCount), upScratch_);
        std::copy_n(upScratch_.begin(), upCount, ch.fifo.begin() + static_cast<std::ptrdiff_t>(ch.fifoFill));
        ch.fifoFill += upCount;
        // After k host inputs the chain has emitted ceil(ceil(k a) / a) >= k outputs (a = low/host rate),
        // so the FIFO never runs dry and needs no pre-fill: the latency is the resamplers' alone.
        if (ch.fifoFill < n)
            throw std::logic_error("EchoPipeline: output underrun");
        std::copy_n(ch.fifo.begin(), n, out[c].begin());
        std::copy(ch.fifo.begin() + static_cast<std::ptrdiff_t>(n), ch.fifo.begin() + static_cast<std::ptrdiff_t>(ch.fifoFill),
                  ch.fifo.begin());
        ch.fifoFill -= n;
    }
}

} // namespace quell::engine
