// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// WAV (and any libsndfile format) reading and writing as float32 planar channels.
// Errors are quell::io::FileError with a one-line message naming the file and the problem.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace quell::io {

class FileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct AudioFormat {
    int sampleRate = 0;
    int channels = 0;
    int sndfileFormat = 0;   // libsndfile SF_FORMAT_* (container | subtype), to write the same format back
    std::string subtypeName; // "PCM_16", "PCM_24", "PCM_32", "FLOAT", ...
};

struct AudioData {
    AudioFormat format;
    std::vector<std::vector<float>> channels; // planar
    std::size_t frames() const { return channels.empty() ? 0 : channels[0].size(); }
};

// Reads a whole file; "-" reads standard input to its end (any container libsndfile reads). Throws
// FileError: missing or unreadable file, not an audio file, empty file, NaN or Inf samples (with the
// frame and channel of the first one).
AudioData readAudio(const std::string& path);

// Writes to a temporary file beside `path` and renames it into place only when every frame was written,
// so a failure never leaves a half-written file behind. Same container and sample format as `format`.
// "-" writes to standard output, encoded whole in memory first: nothing goes out unless all of it can.
void writeAudioAtomically(const std::string& path, const AudioFormat& format,
                          const std::vector<std::vector<float>>& channels);

// The format to write `path` in: the container its extension names (.wav, .flac, .ogg/.oga, .aif/.aiff,
// .caf, .w64, .au), the input's rate and channels, and the input's sample format where that container
// takes it (else the container's nearest: FLAC 24-bit for float input, Vorbis for Ogg). Throws FileError
// for an extension that names no container it writes. "-" (standard output) is WAV.
AudioFormat outputFormatFor(const std::string& path, const AudioFormat& input);

// Throws FileError unless the folder `path` would be written in exists and is writable: checked before
// long work, so a run never ends by finding it cannot save its result.
void requireWritableFolder(const std::string& path);

// True when both paths name the same existing file (hard links and different spellings included).
bool sameFile(const std::string& a, const std::string& b);

} // namespace quell::io
