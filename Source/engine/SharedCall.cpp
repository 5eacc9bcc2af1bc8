// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/SharedCall.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace quell::engine {

SharedCall::~SharedCall()
{
    close();
}

void SharedCall::open(const SharedCallSettings& settings, int hostRate)
{
    close();
    // The rate and channels are checked before an engine is made for them.
    CallResampler::check(hostRate, 1, settings.engine.farEndChannels, 1);
    member_ = SharedCallEngine::join(settings);
    resampler_.prepare(hostRate, settings.engine.sampleRate, 1, settings.engine.farEndChannels, member_.engine->blockSamples(),
                       member_.engine->latencySamples());
    outLow_.assign(member_.engine->blockSamples(), 0.0f);
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

void SharedCall::process(std::span<const float> mic, std::span<const std::span<const float>> far, std::vector<float>& out, bool moreQueued)
{
    if (!isOpen())
        throw std::logic_error("SharedCall::process before open");
    const std::span<const float> mics[1] = {mic};
    resampler_.push(mics, far);
    runBlocks(out, moreQueued);
}

void SharedCall::finish(std::vector<float>& out)
{
    if (!isOpen())
        throw std::logic_error("SharedCall::finish before open");
    // Each round of silence brings at least a hold of outputs out: a few rounds at most.
    for (int round = 0; !resampler_.outputComplete(); ++round) {
        if (round > 64)
            throw std::logic_error("SharedCall::finish: the outputs did not come out");
        resampler_.pushSilence(static_cast<std::size_t>(std::max(resampler_.holdSamples(), 64)));
        runBlocks(out, false);
    }
    runBlocks(out, false);
}

void SharedCall::runBlocks(std::vector<float>& out, bool moreQueued)
{
    const float* far[aec::kMaxFarEndChannels] = {};
    const std::size_t channels = static_cast<std::size_t>(resampler_.farEndChannels());
    while (resampler_.hasBlock()) {
        for (std::size_t c = 0; c < channels; ++c)
            far[c] = resampler_.farBlock(static_cast<int>(c));
        // More blocks queued behind this one: the call has fallen behind (the engine lets it catch up
        // where it can).
        member_.engine->process(member_.stream, resampler_.micBlock(0), {far, channels}, outLow_.data(),
                                moreQueued || resampler_.blocksReady() > 1);
        const float* outs[1] = {outLow_.data()};
        resampler_.popBlock(outs);
    }
    const std::span<const float> ready = resampler_.output(0);
    out.insert(out.end(), ready.begin(), ready.end());
    resampler_.consumeOutput(ready.size());
}

} // namespace quell::engine
