// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// libsndfile's pieces that the io files share (WavFile, AudioFileReader, AudioFileWriter): not part of
// the library's interface.
#include <sndfile.h>

#include <memory>
#include <string>

#include "io/WavFile.h"

namespace quell::io {

struct SndfileCloser {
    void operator()(SNDFILE* f) const { sf_close(f); }
};
using SndfileHandle = std::unique_ptr<SNDFILE, SndfileCloser>;

// "PCM_16", "FLOAT", ... for a libsndfile format.
std::string subtypeName(int format);
// What libsndfile is told to write `format` with `channels` channels; throws FileError naming `name`
// for a format it cannot write.
SF_INFO infoToWrite(const std::string& name, const AudioFormat& format, std::size_t channels);
// The checks of an input file before libsndfile opens it: it exists, is a readable regular file and is
// not empty; throws FileError naming the problem.
void requireReadableFile(const std::string& path);

} // namespace quell::io
