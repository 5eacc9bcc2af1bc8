// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// An audio file read a block at a time (any container libsndfile reads) as float32 planar channels: its
// format and length known when it opens, its samples checked as they come. For files too long to hold
// (quell-render --calls); readAudio reads a whole file, and standard input.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/WavFile.h"

namespace quell::io {

class AudioFileReader {
public:
    // Throws FileError as readAudio does: missing, unreadable or empty file, not an audio file.
    explicit AudioFileReader(const std::string& path);
    ~AudioFileReader();
    AudioFileReader(const AudioFileReader&) = delete;
    AudioFileReader& operator=(const AudioFileReader&) = delete;

    const AudioFormat& format() const { return format_; }
    std::size_t frames() const { return frames_; }
    std::size_t position() const { return position_; }

    // The next frames of each channel into out[c] (format().channels spans of one length), at most their
    // length: how many (0 at the end). Throws FileError on a read error or a NaN or Inf sample (its frame
    // and channel named).
    std::size_t read(std::span<const std::span<float>> out);

private:
    std::string path_;
    struct File;
    std::unique_ptr<File> file_;
    AudioFormat format_;
    std::size_t frames_ = 0, position_ = 0;
    std::vector<float> interleaved_;
};

} // namespace quell::io
