// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/WavFile.h"

#include "io/Sndfile.h"

#include <sndfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

namespace quell::io {
namespace {

// A file in memory for libsndfile's virtual I/O: standard input read whole (a pipe cannot seek, and
// most containers need to), or an output encoded whole before its first byte goes to standard output
// (the header's sizes are patched by seeking back).
struct MemoryFile {
    std::vector<unsigned char> bytes;
    sf_count_t position = 0;

    static MemoryFile& of(void* user) { return *static_cast<MemoryFile*>(user); }
    static sf_count_t length(void* user) { return static_cast<sf_count_t>(of(user).bytes.size()); }
    static sf_count_t seek(sf_count_t offset, int whence, void* user)
    {
        MemoryFile& m = of(user);
        const sf_count_t base = whence == SEEK_CUR ? m.position : whence == SEEK_END ? length(user) : 0;
        m.position = std::max<sf_count_t>(0, base + offset);
        return m.position;
    }
    static sf_count_t read(void* ptr, sf_count_t count, void* user)
    {
        MemoryFile& m = of(user);
        const sf_count_t n = std::clamp<sf_count_t>(length(user) - m.position, 0, count);
        std::memcpy(ptr, m.bytes.data() + m.position, static_cast<std::size_t>(n));
        m.position += n;
        return n;
    }
    static sf_count_t write(const void* ptr, sf_count_t count, void* user)
    {
        MemoryFile& m = of(user);
        const auto end = static_cast<std::size_t>(m.position + count);
        if (end > m.bytes.size())
            m.bytes.resize(end);
        std::memcpy(m.bytes.data() + m.position, ptr, static_cast<std::size_t>(count));
        m.position += count;
        return count;
    }
    static sf_count_t tell(void* user) { return of(user).position; }
    static SF_VIRTUAL_IO io() { return {&length, &seek, &read, &write, &tell}; }
};

constexpr const char* kStdin = "standard input";

// The whole of standard input.
std::vector<unsigned char> readStandardInput()
{
    std::vector<unsigned char> bytes;
    unsigned char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
        if (n > 0)
            bytes.insert(bytes.end(), chunk, chunk + n);
        else if (n == 0)
            return bytes;
        else if (errno != EINTR)
            throw FileError(std::string(kStdin) + ": cannot read: " + std::strerror(errno));
    }
}

AudioData decode(SNDFILE* file, const SF_INFO& info, const std::string& name)
{
    if (info.frames <= 0)
        throw FileError(name + ": empty file (no audio frames)");
    if (info.channels <= 0)
        throw FileError(name + ": has no channels");
    AudioData data;
    data.format.sampleRate = info.samplerate;
    data.format.channels = info.channels;
    data.format.sndfileFormat = info.format;
    data.format.subtypeName = subtypeName(info.format);
    const auto frames = static_cast<std::size_t>(info.frames);
    const auto ch = static_cast<std::size_t>(info.channels);
    std::vector<float> interleaved(frames * ch);
    // Integer files are scaled to [-1, 1); float files are read as stored (no clipping).
    sf_command(file, SFC_SET_NORM_FLOAT, nullptr, SF_TRUE);
    const sf_count_t got = sf_readf_float(file, interleaved.data(), info.frames);
    if (got != info.frames)
        throw FileError(name + ": truncated or unreadable audio data (read " + std::to_string(got) + " of "
                        + std::to_string(info.frames) + " frames)");
    data.channels.assign(ch, std::vector<float>(frames));
    for (std::size_t f = 0; f < frames; ++f)
        for (std::size_t c = 0; c < ch; ++c) {
            const float v = interleaved[f * ch + c];
            if (!std::isfinite(v))
                throw FileError(name + ": contains " + (std::isnan(v) ? "NaN" : "Inf") + " samples (first at frame "
                                + std::to_string(f) + ", channel " + std::to_string(c + 1) + ")");
            data.channels[c][f] = v;
        }
    return data;
}

AudioData readStandardInputAudio()
{
    MemoryFile memory{readStandardInput()};
    if (memory.bytes.empty())
        throw FileError(std::string(kStdin) + ": empty (nothing was piped in)");
    SF_VIRTUAL_IO io = MemoryFile::io();
    SF_INFO info{};
    SndfileHandle file(sf_open_virtual(&io, SFM_READ, &info, &memory));
    if (!file)
        throw FileError(std::string(kStdin) + ": not a WAV or other audio stream libsndfile can read (" + sf_strerror(nullptr) + ")");
    return decode(file.get(), info, kStdin);
}

// Writes every frame; returns libsndfile's error text, empty when all went.
std::string encode(SNDFILE* file, const std::vector<std::vector<float>>& channels)
{
    const std::size_t frames = channels[0].size(), ch = channels.size();
    // Integer formats: clip rather than wrap when the output exceeds full scale.
    sf_command(file, SFC_SET_CLIPPING, nullptr, SF_TRUE);
    // No PEAK chunk: it carries the time of writing, so the same render would differ byte for byte.
    sf_command(file, SFC_SET_ADD_PEAK_CHUNK, nullptr, SF_FALSE);
    std::vector<float> interleaved(frames * ch);
    for (std::size_t f = 0; f < frames; ++f)
        for (std::size_t c = 0; c < ch; ++c)
            interleaved[f * ch + c] = channels[c][f];
    const sf_count_t put = sf_writef_float(file, interleaved.data(), static_cast<sf_count_t>(frames));
    return put == static_cast<sf_count_t>(frames) ? std::string() : std::string(sf_strerror(file));
}

void writeStandardOutputAudio(const AudioFormat& format, const std::vector<std::vector<float>>& channels)
{
    const std::string name = "standard output";
    SF_INFO info = infoToWrite(name, format, channels.size());
    MemoryFile memory;
    {
        SF_VIRTUAL_IO io = MemoryFile::io();
        SndfileHandle file(sf_open_virtual(&io, SFM_WRITE, &info, &memory));
        if (!file)
            throw FileError(name + ": cannot encode the output (" + sf_strerror(nullptr) + ")");
        if (const std::string why = encode(file.get(), channels); !why.empty())
            throw FileError(name + ": encoding failed (" + why + ")");
    }
    std::size_t done = 0;
    while (done < memory.bytes.size()) {
        const ssize_t n = ::write(STDOUT_FILENO, memory.bytes.data() + done, memory.bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            throw FileError(name + ": write failed: " + std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
}

} // namespace

AudioData readAudio(const std::string& path)
{
    if (path == "-")
        return readStandardInputAudio();
    requireReadableFile(path);

    SF_INFO info{};
    SndfileHandle file(sf_open(path.c_str(), SFM_READ, &info));
    if (!file)
        throw FileError(path + ": not a WAV or other audio file libsndfile can read (" + sf_strerror(nullptr) + ")");
    return decode(file.get(), info, path);
}

void writeAudioAtomically(const std::string& path, const AudioFormat& format,
                          const std::vector<std::vector<float>>& channels)
{
    if (channels.empty())
        throw FileError(path + ": nothing to write (no channels)");
    if (path == "-") {
        writeStandardOutputAudio(format, channels);
        return;
    }
    SF_INFO info = infoToWrite(path, format, channels.size());
    const std::string tmp = path + ".part-" + std::to_string(::getpid());
    {
        SndfileHandle file(sf_open(tmp.c_str(), SFM_WRITE, &info));
        if (!file)
            throw FileError(path + ": cannot create the output file (" + sf_strerror(nullptr) + ")");
        if (const std::string why = encode(file.get(), channels); !why.empty()) {
            file.reset();
            std::remove(tmp.c_str());
            throw FileError(path + ": write failed (" + why + ")");
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(tmp.c_str());
        throw FileError(path + ": cannot move the finished file into place: " + why);
    }
}

bool sameFile(const std::string& a, const std::string& b)
{
    struct stat sa {}, sb {};
    if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0)
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

AudioFormat outputFormatFor(const std::string& path, const AudioFormat& input)
{
    std::string ext = path == "-" ? ".wav" : std::filesystem::path(path).extension().string();
    for (char& c : ext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    struct Container {
        const char* ext;
        int major;
    };
    static constexpr Container containers[] = {{".wav", SF_FORMAT_WAV}, {".flac", SF_FORMAT_FLAC}, {".ogg", SF_FORMAT_OGG},
                                               {".oga", SF_FORMAT_OGG}, {".aif", SF_FORMAT_AIFF}, {".aiff", SF_FORMAT_AIFF},
                                               {".caf", SF_FORMAT_CAF}, {".w64", SF_FORMAT_W64}, {".au", SF_FORMAT_AU}};
    int major = 0;
    for (const Container& c : containers)
        if (ext == c.ext)
            major = c.major;
    if (major == 0)
        throw FileError(path + ": the extension '" + ext + "' names no format quell writes (.wav, .flac, .ogg, .aiff, .caf, .w64, .au)");
    AudioFormat out = input;
    const int subtype = input.sndfileFormat & SF_FORMAT_SUBMASK;
    SF_INFO info{};
    info.samplerate = input.sampleRate;
    info.channels = input.channels;
    info.format = major | subtype;
    if (!sf_format_check(&info)) {
        // The nearest the container takes: Ogg is Vorbis; the others take 24-bit integers.
        const int fallback = major == SF_FORMAT_OGG ? SF_FORMAT_VORBIS : SF_FORMAT_PCM_24;
        info.format = major | fallback;
        if (!sf_format_check(&info))
            throw FileError(path + ": cannot write " + std::to_string(input.channels) + " channels at "
                            + std::to_string(input.sampleRate) + " Hz in this container");
    }
    out.sndfileFormat = info.format;
    out.subtypeName = subtypeName(info.format);
    return out;
}

void requireWritableFolder(const std::string& path)
{
    std::filesystem::path folder = std::filesystem::path(path).parent_path();
    if (folder.empty())
        folder = ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec))
        throw FileError(path + ": the folder " + folder.string() + " does not exist");
    if (::access(folder.c_str(), W_OK) != 0)
        throw FileError(path + ": the folder " + folder.string() + " is not writable");
}

} // namespace quell::io
