// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/CallResampler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "aec/EchoCancellerSettings.h"
#include "engine/EchoPipeline.h"

namespace quell::engine {

void CallResampler::check(int hostRate, int micChannels, int farEndChannels, std::size_t block)
{
    if (hostRate < aec::kMinSampleRate || hostRate > aec::kMaxSampleRate)
        throw std::invalid_argument("a rate of " + std::to_string(hostRate) + " Hz (the canceller takes " + std::to_string(aec::kMinSampleRate)
                                    + " to " + std::to_string(aec::kMaxSampleRate) + ")");
    if (micChannels < 1 || farEndChannels < 1 || farEndChannels > aec::kMaxFarEndChannels || block == 0)
        throw std::invalid_argument("CallResampler: " + std::to_string(micChannels) + " microphone and " + std::to_string(farEndChannels)
                                    + " far-end channels, blocks of " + std::to_string(block));
}

void CallResampler::prepare(int hostRate, int cancellerRate, int micChannels, int farEndChannels, std::size_t block, int cancellerLatency)
{
    check(hostRate, micChannels, farEndChannels, block);
    resampling_ = hostRate != cancellerRate;
    block_ = block;
    const auto mics = static_cast<std::size_t>(micChannels), fars = static_cast<std::size_t>(farEndChannels);
    micDown_.assign(mics, {});
    up_.assign(mics, {});
    farDown_.assign(fars, {});
    if (resampling_) {
        for (auto& r : micDown_)
            r.prepare(hostRate, cancellerRate);
        for (auto& r : farDown_)
            r.prepare(hostRate, cancellerRate);
        for (auto& r : up_)
            r.prepare(cancellerRate, hostRate);
        delay_ = static_cast<int>(std::lround(pipelineLatency(micDown_[0], up_[0], cancellerLatency, hostRate, cancellerRate)));
    } else {
        delay_ = cancellerLatency;
    }
    // A block's samples at the host rate, and the one the resamplers' rounding may hold back.
    hold_ = delay_ + static_cast<int>(std::ceil(static_cast<double>(block) * hostRate / cancellerRate)) + 1;
    toDrop_ = static_cast<std::size_t>(delay_);
    inputs_ = taken_ = 0;
    lowPos_ = 0;
    micLow_.assign(mics, {});
    farLow_.assign(fars, {});
    ready_.assign(mics, {});
    upScratch_.clear();
    silence_.clear();
}

void CallResampler::append(dsp::PolyphaseResampler<float>& r, std::span<const float> in, std::vector<float>& low)
{
    if (!resampling_) {
        low.insert(low.end(), in.begin(), in.end());
        return;
    }
    const std::size_t at = low.size();
    low.resize(at + r.maxOutput(in.size()));
    low.resize(at + r.process(in, std::span<float>(low).subspan(at)));
}

void CallResampler::push(std::span<const std::span<const float>> mic, std::span<const std::span<const float>> far)
{
    if (mic.size() != micLow_.size() || far.size() != farLow_.size())
        throw std::invalid_argument("CallResampler::push: " + std::to_string(mic.size()) + " microphone and " + std::to_string(far.size())
                                    + " far-end channels, the call has " + std::to_string(micLow_.size()) + " and "
                                    + std::to_string(farLow_.size()));
    const std::size_t n = mic[0].size();
    for (const auto& s : mic)
        if (s.size() != n)
            throw std::invalid_argument("CallResampler::push: channels of different lengths");
    for (const auto& s : far)
        if (s.size() != n)
            throw std::invalid_argument("CallResampler::push: the far end and the microphone differ in length");
    // The consumed blocks go first, so the buffers hold what is pending and no more.
    if (lowPos_ > 0) {
        for (auto* set : {&micLow_, &farLow_})
            for (auto& v : *set)
                v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lowPos_));
        lowPos_ = 0;
    }
    for (std::size_t c = 0; c < mic.size(); ++c)
        append(micDown_[c], mic[c], micLow_[c]);
    for (std::size_t c = 0; c < far.size(); ++c)
        append(farDown_[c], far[c], farLow_[c]);
    inputs_ += n;
}

void CallResampler::pushSilence(std::size_t frames)
{
    silence_.assign(frames, 0.0f);
    std::vector<std::span<const float>> mic(micLow_.size(), silence_), far(farLow_.size(), silence_);
    const std::uint64_t inputs = inputs_;
    push(mic, far);
    inputs_ = inputs;
}

void CallResampler::popBlock(std::span<const float* const> out)
{
    if (!hasBlock())
        throw std::logic_error("CallResampler::popBlock without a block");
    if (out.size() != ready_.size())
        throw std::invalid_argument("CallResampler::popBlock: " + std::to_string(out.size()) + " outputs for " + std::to_string(ready_.size())
                                    + " microphone channels");
    std::size_t drop = 0;
    for (std::size_t c = 0; c < out.size(); ++c) {
        std::span<const float> host(out[c], block_);
        if (resampling_) {
            upScratch_.resize(up_[c].maxOutput(block_));
            upScratch_.resize(up_[c].process(host, upScratch_));
            host = upScratch_;
        }
        // Every channel's up-resampler gives the same count: the delay comes off each the same way.
        drop = std::min(toDrop_, host.size());
        ready_[c].insert(ready_[c].end(), host.begin() + static_cast<std::ptrdiff_t>(drop), host.end());
    }
    toDrop_ -= drop;
    lowPos_ += block_;
}

std::size_t CallResampler::outputReady() const
{
    // The up-resampler may run a few samples past the input: those wait until their inputs are counted.
    return static_cast<std::size_t>(std::min<std::uint64_t>(ready_.front().size(), inputs_ - taken_));
}

void CallResampler::consumeOutput(std::size_t frames)
{
    if (frames > outputReady())
        throw std::invalid_argument("CallResampler::consumeOutput: " + std::to_string(frames) + " of " + std::to_string(outputReady()) + " ready");
    for (auto& r : ready_)
        r.erase(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(frames));
    taken_ += frames;
}

} // namespace quell::engine
