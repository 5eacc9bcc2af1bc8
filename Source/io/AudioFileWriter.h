// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// An audio file written a block at a time to a temporary file beside its path and renamed into place by
// commit(): a run that fails or stops before leaves no file under the final name (as
// writeAudioAtomically, for outputs too long to hold: quell-render --calls).
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "io/WavFile.h"

namespace quell::io {

class AudioFileWriter {
public:
    // `format` as outputFormatFor gives it. Throws FileError: a format the container cannot hold, a
    // folder it cannot write in. Not standard output ("-").
    AudioFileWriter(const std::string& path, const AudioFormat& format, int channels);
    // Removes the temporary file unless commit() ran.
    ~AudioFileWriter();
    AudioFileWriter(const AudioFileWriter&) = delete;
    AudioFileWriter& operator=(const AudioFileWriter&) = delete;

    // The next frames of every channel (spans of one length). Throws FileError (a full disk).
    void write(std::span<const std::span<const float>> channels);
    // Closes the file and renames it into place. Throws FileError.
    void commit();
    std::size_t frames() const { return frames_; }

private:
    std::string path_, temporary_;
    struct File;
    std::unique_ptr<File> file_;
    int channels_ = 0;
    std::size_t frames_ = 0;
    bool committed_ = false;
};

} // namespace quell::io
