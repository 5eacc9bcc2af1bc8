// SPDX-License-Identifier: GPL-3.0-or-later
// AudioFileReader and AudioFileWriter (quell-render --calls): a file read in blocks of any size is the
// file readAudio reads, a bad sample is named with its frame and channel; a file written in blocks is
// what writeAudioAtomically writes, and appears only when committed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <vector>

#include <sndfile.h>
#include <unistd.h>

#include "io/AudioFileReader.h"
#include "io/AudioFileWriter.h"
#include "io/WavFile.h"
#include "support/TempFolder.h"

namespace fs = std::filesystem;
using namespace quell;

namespace {

std::vector<std::vector<float>> stereoNoise(std::size_t frames)
{
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    std::vector<std::vector<float>> c(2, std::vector<float>(frames));
    for (auto& ch : c)
        for (auto& v : ch)
            v = u(rng);
    return c;
}

} // namespace

TEST_CASE("AudioFileReader: blocks of any size give readAudio's samples; a bad sample and a bad file are named", "[io]")
{
    test::TempFolder dir("quell-filestream");
    const std::string path = dir.path + "/in.wav";
    const io::AudioFormat f{44100, 2, SF_FORMAT_WAV | SF_FORMAT_PCM_24, "PCM_24"};
    io::writeAudioAtomically(path, f, stereoNoise(10007));
    const io::AudioData whole = io::readAudio(path);
    io::AudioFileReader reader(path);
    CHECK(reader.format().sampleRate == 44100);
    CHECK(reader.format().channels == 2);
    CHECK(reader.format().subtypeName == "PCM_24");
    CHECK(reader.frames() == 10007);
    std::vector<std::vector<float>> got(2);
    std::vector<float> a(1500), b(1500);
    std::mt19937 rng(3);
    for (;;) {
        const std::size_t want = std::uniform_int_distribution<std::size_t>(1, 1500)(rng);
        const std::span<float> out[2] = {std::span<float>(a).first(want), std::span<float>(b).first(want)};
        const std::size_t n = reader.read(out);
        if (n == 0)
            break;
        got[0].insert(got[0].end(), a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n));
        got[1].insert(got[1].end(), b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
    }
    CHECK(got == whole.channels);
    CHECK(reader.position() == 10007);

    // A NaN in a float file: named with its frame and channel when its block is read.
    auto bad = stereoNoise(3000);
    bad[1][2500] = std::numeric_limits<float>::quiet_NaN();
    const std::string nan = dir.path + "/nan.wav";
    io::writeAudioAtomically(nan, {16000, 2, SF_FORMAT_WAV | SF_FORMAT_FLOAT, "FLOAT"}, bad);
    io::AudioFileReader nanReader(nan);
    const std::span<float> first[2] = {std::span<float>(a).first(1000), std::span<float>(b).first(1000)};
    CHECK(nanReader.read(first) == 1000);
    CHECK(nanReader.read(first) == 1000);
    CHECK_THROWS_WITH(nanReader.read(first), Catch::Contains("NaN") && Catch::Contains("frame 2500, channel 2"));

    CHECK_THROWS_AS(io::AudioFileReader(dir.path + "/missing.wav"), io::FileError);
    CHECK_THROWS_WITH(io::AudioFileReader(dir.path), Catch::Contains("is a directory"));
}

TEST_CASE("AudioFileWriter: blocks written are the file writeAudioAtomically writes, which appears only when committed", "[io]")
{
    test::TempFolder dir("quell-filestream");
    const auto channels = stereoNoise(9001);
    const io::AudioFormat f{48000, 2, SF_FORMAT_FLAC | SF_FORMAT_PCM_24, "PCM_24"};
    io::writeAudioAtomically(dir.path + "/whole.flac", f, channels);
    const std::string path = dir.path + "/blocks.flac";
    {
        io::AudioFileWriter writer(path, f, 2);
        for (std::size_t pos = 0; pos < 9001; pos += 1234) {
            const std::size_t n = std::min<std::size_t>(1234, 9001 - pos);
            const std::span<const float> block[2] = {std::span<const float>(channels[0]).subspan(pos, n),
                                                     std::span<const float>(channels[1]).subspan(pos, n)};
            writer.write(block);
            CHECK(!fs::exists(path));   // a temporary file until the end
        }
        CHECK(writer.frames() == 9001);
        writer.commit();
        const std::span<const float> more[2] = {std::span<const float>(channels[0]).first(1), std::span<const float>(channels[1]).first(1)};
        CHECK_THROWS_AS(writer.write(more), io::FileError);
    }
    CHECK(io::readAudio(path).channels == io::readAudio(dir.path + "/whole.flac").channels);
    CHECK(dir.entries() == 2);   // no temporary file left

    // Abandoned before commit: nothing under any name.
    {
        io::AudioFileWriter writer(dir.path + "/abandoned.wav", {16000, 1, SF_FORMAT_WAV | SF_FORMAT_PCM_16, "PCM_16"}, 1);
        const std::span<const float> block[1] = {std::span<const float>(channels[0]).first(100)};
        writer.write(block);
    }
    CHECK(dir.entries() == 2);
    CHECK_THROWS_AS(io::AudioFileWriter("-", f, 2), io::FileError);
}
