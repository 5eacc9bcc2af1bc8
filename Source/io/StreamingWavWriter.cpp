// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/StreamingWavWriter.h"

#include <sndfile.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

namespace quell::io {

StreamingWavWriter::StreamingWavWriter(const std::string& path, const AudioFormat& format, double secondsOfBuffer)
    : path_(path), partPath_(path + ".part-" + std::to_string(::getpid())), channels_(format.channels)
{
    SF_INFO info{};
    info.samplerate = format.sampleRate;
    info.channels = format.channels;
    info.format = format.sndfileFormat != 0 ? format.sndfileFormat : (SF_FORMAT_WAV | SF_FORMAT_PCM_16);
    if (!sf_format_check(&info))
        throw FileError(path + ": cannot record in this format");
    SNDFILE* f = sf_open(partPath_.c_str(), SFM_WRITE, &info);
    if (f == nullptr)
        throw FileError(path + ": cannot create the recording (" + sf_strerror(nullptr) + ")");
    sf_command(f, SFC_SET_CLIPPING, nullptr, SF_TRUE);
    file_ = f;
    fifo_.prepare(static_cast<std::size_t>(secondsOfBuffer * format.sampleRate) * static_cast<std::size_t>(channels_));
    writer_ = std::thread([this] { writerLoop(); });
}

StreamingWavWriter::~StreamingWavWriter()
{
    if (!finished_) {
        running_.store(false);
        if (writer_.joinable())
            writer_.join();
        if (file_ != nullptr)
            sf_close(static_cast<SNDFILE*>(file_));
        std::remove(partPath_.c_str()); // abandoned (an exception unwound us): no half file under any name
    }
}

bool StreamingWavWriter::push(const float* interleaved, std::size_t frames) noexcept
{
    if (!fifo_.write(interleaved, frames * static_cast<std::size_t>(channels_))) {
        dropped_.fetch_add(frames, std::memory_order_relaxed);
        return false;
    }
    return true;
}

void StreamingWavWriter::writerLoop()
{
    std::vector<float> chunk(4096 * static_cast<std::size_t>(channels_));
    auto drain = [&] {
        bool any = false;
        for (;;) {
            const std::size_t avail = fifo_.readAvailable() / static_cast<std::size_t>(channels_);
            if (avail == 0)
                return any;
            const std::size_t frames = std::min<std::size_t>(avail, 4096);
            fifo_.read(chunk.data(), frames * static_cast<std::size_t>(channels_));
            if (sf_writef_float(static_cast<SNDFILE*>(file_), chunk.data(), static_cast<sf_count_t>(frames))
                != static_cast<sf_count_t>(frames))
                failed_.store(true);
            written_.fetch_add(frames);
            any = true;
        }
    };
    while (running_.load()) {
        if (!drain())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    drain();
}

std::uint64_t StreamingWavWriter::finish()
{
    if (finished_)
        return written_.load();
    finished_ = true;
    running_.store(false);
    writer_.join();
    const bool closeOk = sf_close(static_cast<SNDFILE*>(file_)) == 0;
    file_ = nullptr;
    if (failed_.load() || !closeOk) {
        std::remove(partPath_.c_str());
        throw FileError(path_ + ": writing the recording failed (disk full?)");
    }
    if (std::rename(partPath_.c_str(), path_.c_str()) != 0) {
        std::remove(partPath_.c_str());
        throw FileError(path_ + ": cannot move the finished recording into place");
    }
    return written_.load();
}

} // namespace quell::io
