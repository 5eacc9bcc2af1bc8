// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/AudioFileWriter.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "io/Sndfile.h"

namespace quell::io {

struct AudioFileWriter::File {
    SndfileHandle handle;
    std::vector<float> interleaved;
};

AudioFileWriter::AudioFileWriter(const std::string& path, const AudioFormat& format, int channels)
    : path_(path), temporary_(path + ".part-" + std::to_string(::getpid())), file_(std::make_unique<File>()), channels_(channels)
{
    if (path == "-")
        throw FileError("standard output: written whole (writeAudioAtomically), not a block at a time");
    SF_INFO info = infoToWrite(path, format, static_cast<std::size_t>(channels));
    file_->handle.reset(sf_open(temporary_.c_str(), SFM_WRITE, &info));
    if (!file_->handle)
        throw FileError(path + ": cannot create the output file (" + sf_strerror(nullptr) + ")");
    prepareForWriting(file_->handle.get());
}

AudioFileWriter::~AudioFileWriter()
{
    if (committed_)
        return;
    file_->handle.reset();
    std::remove(temporary_.c_str());
}

void AudioFileWriter::write(std::span<const std::span<const float>> channels)
{
    if (committed_ || !file_->handle)
        throw FileError(path_ + ": written after it was finished");
    if (channels.size() != static_cast<std::size_t>(channels_))
        throw FileError(path_ + ": " + std::to_string(channels.size()) + " channels written to a file of " + std::to_string(channels_));
    if (const std::string why = writeFrames(file_->handle.get(), channels, file_->interleaved); !why.empty())
        throw FileError(path_ + ": write failed (" + why + ")");
    frames_ += channels[0].size();
}

void AudioFileWriter::commit()
{
    if (committed_)
        return;
    // sf_close writes the header's sizes; a failure there is a failed write.
    SNDFILE* f = file_->handle.release();
    if (sf_close(f) != 0) {
        std::remove(temporary_.c_str());
        throw FileError(path_ + ": write failed when closing the file");
    }
    if (std::rename(temporary_.c_str(), path_.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(temporary_.c_str());
        throw FileError(path_ + ": cannot move the finished file into place: " + why);
    }
    committed_ = true;
}

} // namespace quell::io
