// SPDX-License-Identifier: GPL-3.0-or-later
// StreamingWavWriter: what was pushed is what the file holds, the file appears only when finished,
// an abandoned recording leaves nothing, a full FIFO drops and counts.
#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

#include <sndfile.h>
#include <unistd.h>

#include "io/StreamingWavWriter.h"
#include "io/WavFile.h"
#include "support/TempFolder.h"

namespace fs = std::filesystem;
using namespace quell;

namespace {

io::AudioFormat floatStereo()
{
    io::AudioFormat f;
    f.sampleRate = 16000;
    f.channels = 2;
    f.sndfileFormat = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
    return f;
}

} // namespace

TEST_CASE("StreamingWavWriter writes every pushed frame, in order, and renames into place on finish", "[io][wav]")
{
    test::TempFolder dir("quell-wavwriter");
    const std::string path = dir.path + "/rec.wav";
    const std::size_t frames = 40000;   // 2.5 s: longer than one drain chunk, pushed in odd sizes
    std::vector<float> interleaved(2 * frames);
    for (std::size_t i = 0; i < frames; ++i) {
        interleaved[2 * i] = static_cast<float>(i % 1000) / 1000.0f;
        interleaved[2 * i + 1] = -static_cast<float>(i % 777) / 777.0f;
    }
    {
        io::StreamingWavWriter writer(path, floatStereo());
        CHECK_FALSE(fs::exists(path));   // only the .part while recording
        for (std::size_t at = 0, k = 0; at < frames; ++k) {
            const std::size_t n = std::min<std::size_t>(1 + (k * 37) % 513, frames - at);
            REQUIRE(writer.push(interleaved.data() + 2 * at, n));
            at += n;
        }
        CHECK(writer.finish() == frames);
        CHECK(writer.droppedFrames() == 0);
    }
    REQUIRE(fs::exists(path));
    CHECK(dir.entries() == 1);   // no .part left
    const io::AudioData back = io::readAudio(path);
    REQUIRE(back.frames() == frames);
    REQUIRE(back.channels.size() == 2);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < frames; ++i)
        wrong += back.channels[0][i] != interleaved[2 * i] || back.channels[1][i] != interleaved[2 * i + 1];
    CHECK(wrong == 0);
}

TEST_CASE("StreamingWavWriter: abandoned without finish leaves no file; a full FIFO drops and counts", "[io][wav]")
{
    test::TempFolder dir("quell-wavwriter");
    const std::string path = dir.path + "/rec.wav";
    {
        io::StreamingWavWriter writer(path, floatStereo(), 0.01);   // 160 frames of FIFO
        std::vector<float> block(2 * 1000, 0.5f);
        CHECK_FALSE(writer.push(block.data(), 1000));   // larger than the FIFO: dropped whole
        CHECK(writer.droppedFrames() == 1000);
    }
    CHECK(dir.entries() == 0);
    CHECK_THROWS_AS(io::StreamingWavWriter(dir.path + "/no/such/folder/rec.wav", floatStereo()), io::FileError);
}
