// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/Sndfile.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace quell::io {

std::string subtypeName(int format)
{
    switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_16: return "PCM_16";
    case SF_FORMAT_PCM_24: return "PCM_24";
    case SF_FORMAT_PCM_32: return "PCM_32";
    case SF_FORMAT_PCM_U8: return "PCM_U8";
    case SF_FORMAT_PCM_S8: return "PCM_S8";
    case SF_FORMAT_FLOAT: return "FLOAT";
    case SF_FORMAT_DOUBLE: return "DOUBLE";
    default: return "other";
    }
}

SF_INFO infoToWrite(const std::string& name, const AudioFormat& format, std::size_t channels)
{
    SF_INFO info{};
    info.samplerate = format.sampleRate;
    info.channels = static_cast<int>(channels);
    info.format = format.sndfileFormat != 0 ? format.sndfileFormat : (SF_FORMAT_WAV | SF_FORMAT_FLOAT);
    if (!sf_format_check(&info))
        throw FileError(name + ": cannot write this sample format (" + format.subtypeName + ")");
    return info;
}

void requireReadableFile(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw FileError(path + ": cannot open: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode))
        throw FileError(path + ": is a directory, not an audio file");
    if (::access(path.c_str(), R_OK) != 0)
        throw FileError(path + ": cannot read: " + std::strerror(errno));
    if (st.st_size == 0)
        throw FileError(path + ": empty file");
}

} // namespace quell::io
