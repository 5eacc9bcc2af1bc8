// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/SharedCall.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/EchoPipeline.h"

namespace quell::engine {

SharedCall::~SharedCall()
{
    close();
}

void SharedCall::open(const SharedCallSettings& settings, int hostRate)
{
    if (hostRate < aec::kMinSampleRate || hostRate > aec::kMaxSampleRate)
        throw std::invalid_argument("a rate of " + std::to_string(hostRate) + " Hz (the canceller takes " + std::to_string(aec::kMinSampleRate)
                                    + " to " + std::to_string(aec::kMaxSampleRate) + ")");
    const int channels = settings.engine.farEndChannels;
    if (channels < 1 || channels > aec::kMaxFarEndChannels)
        throw std::invalid_argument("SharedCall: " + std::to_string(channels) + " far-end channels");
    close();
    const int rate = settings.engine.sampleRate;
    member_ = SharedCallEngine::join(settings);
    hostRate_ = hostRate;
    channels_ = channels;
    resampling_ = hostRate != rate;
    const int cancellerDelay = member_.engine->latencySamples();
    farDown_.assign(static_cast<std::size_t>(channels), {});
    if (resampling_) {
        micDown_.prepare(hostRate, rate);
        up_.prepare(rate, hostRate);
        for (auto& d : farDown_)
            d.prepare(hostRate, rate);
        delay_ = static_cast<int>(std::lround(pipelineLatency(micDown_, up_, cancellerDelay, hostRate, rate)));
    } else {
        delay_ = cancellerDelay;
    }
    const std::size_t block = member_.engine->blockSamples();
    // A block's samples at the host rate, and the one the resamplers' rounding may hold back.
    hold_ = delay_ + static_cast<int>(std::ceil(static_cast<double>(block) * hostRate / rate)) + 1;
    toDrop_ = static_cast<std::size_t>(delay_);
    inputs_ = emitted_ = 0;
    micLow_.clear();
    farLow_.assign(static_cast<std::size_t>(channels), {});
    outLow_.assign(block, 0.0f);
    ready_.clear();
}

void SharedCall::close()
{
    if (!member_.engine)
        return;
    member_.engine->leave(member_.stream);
    member_ = {};
}

void SharedCall::setControls(const aec::CancellerControls& controls)
{
    if (!isOpen())
        throw std::logic_error("SharedCall::setControls before open");
    member_.engine->setControls(member_.stream, controls);
}

void SharedCall::process(std::span<const float> mic, std::span<const std::span<const float>> far, std::vector<float>& out)
{
    if (!isOpen())
        throw std::logic_error("SharedCall::process before open");
    if (far.size() != static_cast<std::size_t>(channels_))
        throw std::invalid_argument("SharedCall::process: " + std::to_string(far.size()) + " far-end channels, the call has "
                                    + std::to_string(channels_));
    for (const auto& f : far)
        if (f.size() != mic.size())
            throw std::invalid_argument("SharedCall::process: the far end and the microphone differ in length");
    inputs_ += mic.size();
    feed(mic, far);
    emit(out);
}

void SharedCall::finish(std::vector<float>& out)
{
    if (!isOpen())
        throw std::logic_error("SharedCall::finish before open");
    const std::size_t chunk = std::max<std::size_t>(static_cast<std::size_t>(hold_), 64);
    const std::vector<float> zeros(chunk, 0.0f);
    const std::span<const float> far[aec::kMaxFarEndChannels] = {zeros, zeros};
    // Each chunk of silence brings at least a chunk of outputs out, less the delay: a few rounds at most.
    for (int round = 0; emitted_ + ready_.size() < inputs_; ++round) {
        if (round > 64)
            throw std::logic_error("SharedCall::finish: the outputs did not come out");
        feed(zeros, {far, static_cast<std::size_t>(channels_)});
    }
    emit(out);
}

void SharedCall::feed(std::span<const float> mic, std::span<const std::span<const float>> far)
{
    auto append = [&](dsp::PolyphaseResampler<float>& r, std::span<const float> in, std::vector<float>& low) {
        if (!resampling_) {
            low.insert(low.end(), in.begin(), in.end());
            return;
        }
        const std::size_t at = low.size();
        low.resize(at + r.maxOutput(in.size()));
        low.resize(at + r.process(in, std::span<float>(low).subspan(at)));
    };
    append(micDown_, mic, micLow_);
    for (std::size_t c = 0; c < far.size(); ++c)
        append(farDown_[c], far[c], farLow_[c]);
    const std::size_t block = member_.engine->blockSamples();
    std::size_t pos = 0;
    const float* farAt[aec::kMaxFarEndChannels] = {};
    for (; pos + block <= micLow_.size(); pos += block) {
        for (std::size_t c = 0; c < farLow_.size(); ++c)
            farAt[c] = farLow_[c].data() + pos;
        member_.engine->process(member_.stream, micLow_.data() + pos, {farAt, farLow_.size()}, outLow_.data());
        std::span<const float> host(outLow_);
        if (resampling_) {
            scratch_.resize(up_.maxOutput(block));
            scratch_.resize(up_.process(outLow_, scratch_));
            host = scratch_;
        }
        const std::size_t drop = std::min(toDrop_, host.size());
        toDrop_ -= drop;
        ready_.insert(ready_.end(), host.begin() + static_cast<std::ptrdiff_t>(drop), host.end());
    }
    micLow_.erase(micLow_.begin(), micLow_.begin() + static_cast<std::ptrdiff_t>(pos));
    for (auto& f : farLow_)
        f.erase(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(pos));
}

void SharedCall::emit(std::vector<float>& out)
{
    // The up-resampler may run a few samples past the input; those wait for their inputs to be counted.
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(ready_.size(), inputs_ - emitted_));
    out.insert(out.end(), ready_.begin(), ready_.begin() + static_cast<std::ptrdiff_t>(n));
    ready_.erase(ready_.begin(), ready_.begin() + static_cast<std::ptrdiff_t>(n));
    emitted_ += n;
}

} // namespace quell::engine
