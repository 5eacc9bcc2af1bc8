// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/AudioFileReader.h"

#include <algorithm>

#include "io/Sndfile.h"

namespace quell::io {

struct AudioFileReader::File {
    SndfileHandle handle;
};

AudioFileReader::AudioFileReader(const std::string& path) : path_(path), file_(std::make_unique<File>())
{
    requireReadableFile(path);
    SF_INFO info{};
    file_->handle.reset(sf_open(path.c_str(), SFM_READ, &info));
    if (!file_->handle)
        throw FileError(path + ": not a WAV or other audio file libsndfile can read (" + sf_strerror(nullptr) + ")");
    format_ = readableFormat(file_->handle.get(), info, path);
    frames_ = static_cast<std::size_t>(info.frames);
}

AudioFileReader::~AudioFileReader() = default;

std::size_t AudioFileReader::read(std::span<const std::span<float>> out)
{
    const std::size_t channels = static_cast<std::size_t>(format_.channels);
    if (out.size() != channels)
        throw FileError(path_ + ": read into " + std::to_string(out.size()) + " channels of " + std::to_string(channels));
    const std::size_t want = std::min(out[0].size(), frames_ - position_);
    if (want == 0)
        return 0;
    interleaved_.resize(want * channels);
    const sf_count_t got = sf_readf_float(file_->handle.get(), interleaved_.data(), static_cast<sf_count_t>(want));
    if (got != static_cast<sf_count_t>(want))
        throw FileError(path_ + ": truncated or unreadable audio data (read " + std::to_string(position_ + static_cast<std::size_t>(std::max<sf_count_t>(got, 0)))
                        + " of " + std::to_string(frames_) + " frames)");
    deinterleaveChecked(interleaved_.data(), want, out, path_, position_);
    position_ += want;
    return want;
}

} // namespace quell::io
