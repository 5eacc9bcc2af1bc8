// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// libsndfile's pieces that the io files share (WavFile, AudioFileReader, AudioFileWriter): not part of
// the library's interface.
#include <sndfile.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

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

// An opened input's format, checked (frames and channels), with libsndfile set to scale integer samples
// to [-1, 1) and to read float ones as stored. Throws FileError naming `name`.
AudioFormat readableFormat(SNDFILE* file, const SF_INFO& info, const std::string& name);
// `frames` interleaved frames of out.size() channels into out[c] (each at least `frames` long), every
// sample checked: a NaN or Inf throws FileError naming `name`, the frame (counted from `firstFrame`) and
// the channel.
void deinterleaveChecked(const float* interleaved, std::size_t frames, std::span<const std::span<float>> out, const std::string& name,
                         std::size_t firstFrame);
// An output's settings before its first frame: integer formats clip rather than wrap; no PEAK chunk (it
// carries the time of writing, so the same render would differ byte for byte).
void prepareForWriting(SNDFILE* file);
// The frames of every channel (spans of one length), interleaved through `scratch`: libsndfile's error
// text, empty when every frame went.
std::string writeFrames(SNDFILE* file, std::span<const std::span<const float>> channels, std::vector<float>& scratch);

} // namespace quell::io
