// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/WavFile.h"

#include "io/AudioFileReader.h"
#include "io/AudioFileWriter.h"
#include "io/Sndfile.h"

#include <sndfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
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

// Planar spans over every channel of `channels`.
std::vector<std::span<float>> spansOf(std::vector<std::vector<float>>& channels)
{
    return {channels.begin(), channels.end()};
}

AudioData decode(SNDFILE* file, const SF_INFO& info, const std::string& name)
{
    AudioData data;
    data.format = readableFormat(file, info, name);
    const auto frames = static_cast<std::size_t>(info.frames);
    const auto ch = static_cast<std::size_t>(info.channels);
    std::vector<float> interleaved(frames * ch);
    const sf_count_t got = sf_readf_float(file, interleaved.data(), info.frames);
    if (got != info.frames)
        throw FileError(name + ": truncated or unreadable audio data (read " + std::to_string(got) + " of "
                        + std::to_string(info.frames) + " frames)");
    data.channels.assign(ch, std::vector<float>(frames));
    deinterleaveChecked(interleaved.data(), frames, spansOf(data.channels), name, 0);
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

std::vector<std::span<const float>> spansOf(const std::vector<std::vector<float>>& channels)
{
    return {channels.begin(), channels.end()};
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
        prepareForWriting(file.get());
        std::vector<float> scratch;
        if (const std::string why = writeFrames(file.get(), spansOf(channels), scratch); !why.empty())
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
    AudioFileReader reader(path);
    AudioData data;
    data.format = reader.format();
    data.channels.assign(static_cast<std::size_t>(data.format.channels), std::vector<float>(reader.frames()));
    reader.read(spansOf(data.channels));   // every frame, or it throws
    return data;
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
    AudioFileWriter writer(path, format, static_cast<int>(channels.size()));
    writer.write(spansOf(channels));
    writer.commit();
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
