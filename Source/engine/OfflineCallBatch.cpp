// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/OfflineCallBatch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace quell::engine {

namespace {

// A recording held in memory, its outputs collected for Finished::out.
class MemoryRecording final : public CallRecording {
public:
    MemoryRecording(std::vector<std::vector<float>> mic, std::span<const float> far, int rate)
        : mic_(std::move(mic)), far_(far.begin(), far.begin() + static_cast<std::ptrdiff_t>(std::min(far.size(), mic_.at(0).size()))),
          rate_(rate), out_(mic_.size())
    {
        for (const auto& ch : mic_)
            if (ch.size() != mic_[0].size())
                throw std::invalid_argument("OfflineCallBatch::add: the microphone's channels differ in length");
    }
    int sampleRate() const override { return rate_; }
    int micChannels() const override { return static_cast<int>(mic_.size()); }
    std::size_t read(std::span<const std::span<float>> mic, std::span<float> far) override
    {
        const std::size_t n = std::min(far.size(), mic_[0].size() - pos_);
        for (std::size_t c = 0; c < mic_.size(); ++c)
            std::copy_n(mic_[c].begin() + static_cast<std::ptrdiff_t>(pos_), n, mic[c].begin());
        for (std::size_t i = 0; i < n; ++i)
            far[i] = pos_ + i < far_.size() ? far_[pos_ + i] : 0.0f;
        pos_ += n;
        return n;
    }
    void write(std::span<const std::span<const float>> out) override
    {
        for (std::size_t c = 0; c < out.size(); ++c)
            out_[c].insert(out_[c].end(), out[c].begin(), out[c].end());
    }
    std::vector<std::vector<float>> takeOutput() { return std::move(out_); }

private:
    std::vector<std::vector<float>> mic_;
    std::vector<float> far_;
    int rate_;
    std::size_t pos_ = 0;
    std::vector<std::vector<float>> out_;
};

} // namespace

void OfflineCallBatch::prepare(const MultiStreamSettings& settings)
{
    if (settings.farEndChannels != 1)
        throw std::invalid_argument("OfflineCallBatch: one far-end channel (mix a stereo far end first)");
    calls_.prepare(settings);
    rate_ = settings.sampleRate;
    nextId_ = 0;
    recordings_.clear();
    blocks_.reserve(static_cast<std::size_t>(settings.maxStreams));
    micRead_.assign(2, std::vector<float>(kReadFrames));
    farRead_.assign(kReadFrames, 0.0f);
}

int OfflineCallBatch::add(std::vector<std::vector<float>> mic, std::span<const float> far, int hostRate)
{
    if (mic.empty() || mic.size() > 2)
        throw std::invalid_argument("OfflineCallBatch::add: 1 or 2 microphone channels (got " + std::to_string(mic.size()) + ")");
    return add(std::make_unique<MemoryRecording>(std::move(mic), far, hostRate));
}

int OfflineCallBatch::add(std::unique_ptr<CallRecording> recording)
{
    const int channels = recording->micChannels();
    if (channels < 1 || channels > 2)
        throw std::invalid_argument("OfflineCallBatch::add: 1 or 2 microphone channels (got " + std::to_string(channels) + ")");
    if (channels > freeStreams())
        throw std::invalid_argument("OfflineCallBatch::add: " + std::to_string(channels) + " channels, " + std::to_string(freeStreams())
                                    + " free streams");
    Recording r;
    r.resampler.prepare(recording->sampleRate(), rate_, channels, 1, calls_.blockSamples(), calls_.latencySamples());
    r.id = nextId_++;
    r.io = std::move(recording);
    r.outLow.assign(static_cast<std::size_t>(channels), std::vector<float>(calls_.blockSamples()));
    for (int c = 0; c < channels; ++c) {
        const int s = calls_.open();
        if (s < 0)
            throw std::logic_error("OfflineCallBatch: no free stream");
        r.streams.push_back(s);
    }
    recordings_.push_back(std::move(r));
    return recordings_.back().id;
}

void OfflineCallBatch::fill(Recording& r)
{
    const std::size_t channels = r.streams.size();
    while (!r.resampler.hasBlock()) {
        if (r.ended) {
            if (r.resampler.outputComplete())
                return;
            r.resampler.pushSilence(kReadFrames);   // the delay's flush
            continue;
        }
        std::span<float> mic[2] = {micRead_[0], micRead_[1]};
        const std::size_t n = r.io->read({mic, channels}, farRead_);
        if (n == 0) {
            r.ended = true;
            continue;
        }
        const std::span<const float> mics[2] = {std::span<const float>(micRead_[0]).first(n), std::span<const float>(micRead_[1]).first(n)};
        const std::span<const float> far[1] = {std::span<const float>(farRead_).first(n)};
        r.resampler.push({mics, channels}, far);
    }
}

void OfflineCallBatch::drain(Recording& r)
{
    const std::size_t n = r.resampler.outputReady();
    if (n == 0)
        return;
    std::span<const float> out[2];
    for (std::size_t c = 0; c < r.streams.size(); ++c)
        out[c] = r.resampler.output(static_cast<int>(c));
    r.io->write({out, r.streams.size()});
    r.resampler.consumeOutput(n);
}

std::vector<OfflineCallBatch::Finished> OfflineCallBatch::step()
{
    blocks_.clear();
    for (Recording& r : recordings_) {
        r.hasBlock = false;
        if (!r.error.empty())
            continue;
        try {
            fill(r);
        } catch (const std::exception& e) {
            r.error = e.what();
            continue;
        }
        r.hasBlock = r.resampler.hasBlock();
        if (!r.hasBlock)
            continue;
        for (std::size_t c = 0; c < r.streams.size(); ++c) {
            MultiStreamCanceller::StreamBlock b;
            b.stream = r.streams[c];
            b.mic = r.resampler.micBlock(static_cast<int>(c));
            b.ref[0] = r.resampler.farBlock(0);
            b.out = r.outLow[c].data();
            blocks_.push_back(b);
        }
    }
    if (!blocks_.empty())
        calls_.process(blocks_);
    for (Recording& r : recordings_) {
        if (!r.hasBlock)
            continue;
        const float* out[2] = {r.outLow[0].data(), r.outLow.size() > 1 ? r.outLow[1].data() : nullptr};
        r.resampler.popBlock({out, r.streams.size()});
        try {
            drain(r);
        } catch (const std::exception& e) {
            r.error = e.what();
        }
    }
    std::vector<Finished> finished;
    for (auto it = recordings_.begin(); it != recordings_.end();) {
        const bool done = !it->error.empty() || (it->ended && it->resampler.outputFrames() == it->resampler.inputFrames());
        if (!done) {
            ++it;
            continue;
        }
        finished.push_back(finish(*it));
        it = recordings_.erase(it);
    }
    return finished;
}

OfflineCallBatch::Finished OfflineCallBatch::finish(Recording& r)
{
    Finished f;
    f.id = r.id;
    f.error = r.error;
    f.health = calls_.health(r.streams[0]);
    for (const int s : r.streams)
        calls_.close(s);
    f.latencySamples = r.resampler.delaySamples();
    if (auto* memory = dynamic_cast<MemoryRecording*>(r.io.get()))
        f.out = memory->takeOutput();
    f.recording = std::move(r.io);
    return f;
}

} // namespace quell::engine
