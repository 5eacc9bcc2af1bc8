// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/Sndfile.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
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

AudioFormat readableFormat(SNDFILE* file, const SF_INFO& info, const std::string& name)
{
    if (info.frames <= 0)
        throw FileError(name + ": empty file (no audio frames)");
    if (info.channels <= 0)
        throw FileError(name + ": has no channels");
    sf_command(file, SFC_SET_NORM_FLOAT, nullptr, SF_TRUE);
    return {info.samplerate, info.channels, info.format, subtypeName(info.format)};
}

void deinterleaveChecked(const float* interleaved, std::size_t frames, std::span<const std::span<float>> out, const std::string& name,
                         std::size_t firstFrame)
{
    const std::size_t channels = out.size();
    for (std::size_t f = 0; f < frames; ++f)
        for (std::size_t c = 0; c < channels; ++c) {
            const float v = interleaved[f * channels + c];
            if (!std::isfinite(v))
                throw FileError(name + ": contains " + (std::isnan(v) ? "NaN" : "Inf") + " samples (first at frame "
                                + std::to_string(firstFrame + f) + ", channel " + std::to_string(c + 1) + ")");
            out[c][f] = v;
        }
}

void prepareForWriting(SNDFILE* file)
{
    sf_command(file, SFC_SET_CLIPPING, nullptr, SF_TRUE);
    sf_command(file, SFC_SET_ADD_PEAK_CHUNK, nullptr, SF_FALSE);
}

std::string writeFrames(SNDFILE* file, std::span<const std::span<const float>> channels, std::vector<float>& scratch)
{
    const std::size_t frames = channels[0].size(), ch = channels.size();
    scratch.resize(frames * ch);
    for (std::size_t f = 0; f < frames; ++f)
        for (std::size_t c = 0; c < ch; ++c)
            scratch[f * ch + c] = channels[c][f];
    const sf_count_t put = sf_writef_float(file, scratch.data(), static_cast<sf_count_t>(frames));
    return put == static_cast<sf_count_t>(frames) ? std::string() : std::string(sf_strerror(file));
}

} // namespace quell::io
