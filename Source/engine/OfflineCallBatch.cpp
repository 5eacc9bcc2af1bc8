// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/OfflineCallBatch.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/EchoPipeline.h"

namespace quell::engine {

void OfflineCallBatch::prepare(const MultiStreamSettings& settings)
{
    if (settings.farEndChannels != 1)
        throw std::invalid_argument("OfflineCallBatch: one far-end channel (mix a stereo far end first)");
    calls_.prepare(settings);
    rate_ = settings.sampleRate;
    nextId_ = 0;
    recordings_.clear();
    blocks_.reserve(static_cast<std::size_t>(settings.maxStreams));
}

namespace {

// The whole signal through a resampler, as a pipeline feeding it block by block would have it.
std::vector<float> resampleWhole(dsp::PolyphaseResampler<float>& r, std::span<const float> in)
{
    std::vector<float> out(r.maxOutput(in.size()) + 1);
    out.resize(r.process(in, out));
    return out;
}

} // namespace

int OfflineCallBatch::add(std::vector<std::vector<float>> mic, std::span<const float> far, int hostRate)
{
    if (mic.empty() || mic.size() > 2)
        throw std::invalid_argument("OfflineCallBatch::add: 1 or 2 microphone channels (got " + std::to_string(mic.size()) + ")");
    if (static_cast<int>(mic.size()) > freeStreams())
        throw std::invalid_argument("OfflineCallBatch::add: " + std::to_string(mic.size()) + " channels, " + std::to_string(freeStreams())
                                    + " free streams");
    if (hostRate < aec::kMinSampleRate || hostRate > aec::kMaxSampleRate)
        throw std::invalid_argument("a rate of " + std::to_string(hostRate) + " Hz (the canceller takes " + std::to_string(aec::kMinSampleRate)
                                    + " to " + std::to_string(aec::kMaxSampleRate) + ")");
    Recording r;
    r.id = nextId_++;
    r.hostRate = hostRate;
    r.frames = mic[0].size();
    for (const auto& ch : mic)
        if (ch.size() != r.frames)
            throw std::invalid_argument("OfflineCallBatch::add: the microphone's channels differ in length");
    r.resampling = hostRate != rate_;
    const int cancellerLatency = calls_.latencySamples();
    dsp::PolyphaseResampler<float> down, up;
    if (r.resampling) {
        down.prepare(hostRate, rate_);
        up.prepare(rate_, hostRate);
        r.latency = static_cast<int>(std::lround(pipelineLatency(down, up, cancellerLatency, hostRate, rate_)));
    } else {
        r.latency = cancellerLatency;
    }
    // The pipeline runs frames + latency host samples (zeros after the recording) to flush its delay.
    const std::size_t total = r.frames + static_cast<std::size_t>(r.latency);
    std::vector<float> padded(total, 0.0f);
    std::copy_n(far.begin(), std::min(far.size(), r.frames), padded.begin());
    r.farLow = r.resampling ? resampleWhole(down, padded) : padded;
    r.low = r.farLow.size();
    const std::size_t block = calls_.blockSamples();
    const std::size_t blocks = (r.low + block - 1) / block;
    // Past the end a block is padded with zeros: a causal canceller's earlier samples do not hear them.
    r.farLow.resize(blocks * block, 0.0f);
    for (auto& ch : mic) {
        std::fill(padded.begin(), padded.end(), 0.0f);
        std::copy(ch.begin(), ch.end(), padded.begin());
        std::vector<float> low;
        if (r.resampling) {
            down.reset();
            low = resampleWhole(down, padded);
        } else {
            low = padded;
        }
        if (low.size() != r.low)
            throw std::logic_error("OfflineCallBatch: resampler counts diverged");
        low.resize(blocks * block, 0.0f);
        r.micLow.push_back(std::move(low));
        r.outLow.emplace_back(blocks * block, 0.0f);
        ch = {};
    }
    for (std::size_t c = 0; c < r.micLow.size(); ++c) {
        const int s = calls_.open();
        if (s < 0)
            throw std::logic_error("OfflineCallBatch: no free stream");
        r.streams.push_back(s);
    }
    recordings_.push_back(std::move(r));
    return recordings_.back().id;
}

std::vector<OfflineCallBatch::Finished> OfflineCallBatch::step()
{
    const std::size_t block = calls_.blockSamples();
    blocks_.clear();
    for (Recording& r : recordings_)
        for (std::size_t c = 0; c < r.streams.size(); ++c) {
            MultiStreamCanceller::StreamBlock b;
            b.stream = r.streams[c];
            b.mic = r.micLow[c].data() + r.pos;
            b.ref[0] = r.farLow.data() + r.pos;
            b.out = r.outLow[c].data() + r.pos;
            blocks_.push_back(b);
        }
    if (!blocks_.empty())
        calls_.process(blocks_);
    std::vector<Finished> finished;
    for (Recording& r : recordings_)
        r.pos += block;
    while (true) {
        const auto ended = std::find_if(recordings_.begin(), recordings_.end(), [](const Recording& r) { return r.pos >= r.micLow[0].size(); });
        if (ended == recordings_.end())
            break;
        finished.push_back(finish(*ended));
        recordings_.erase(ended);
    }
    return finished;
}

OfflineCallBatch::Finished OfflineCallBatch::finish(Recording& r)
{
    Finished f;
    f.id = r.id;
    f.health = calls_.health(r.streams[0]);
    for (const int s : r.streams)
        calls_.close(s);
    f.latencySamples = r.latency;
    dsp::PolyphaseResampler<float> up;
    if (r.resampling)
        up.prepare(rate_, r.hostRate);
    const std::size_t latency = static_cast<std::size_t>(r.latency);
    for (auto& lowOut : r.outLow) {
        const std::span<const float> canceller(lowOut.data(), r.low);
        std::vector<float> host;
        if (r.resampling) {
            up.reset();
            host = resampleWhole(up, canceller);
        } else {
            host.assign(canceller.begin(), canceller.end());
        }
        // After k host inputs the chain has emitted at least k outputs (EchoPipeline.cpp says why).
        if (host.size() < r.frames + latency)
            throw std::logic_error("OfflineCallBatch: output underrun");
        f.out.emplace_back(host.begin() + static_cast<std::ptrdiff_t>(latency),
                           host.begin() + static_cast<std::ptrdiff_t>(latency + r.frames));
    }
    return f;
}

} // namespace quell::engine
