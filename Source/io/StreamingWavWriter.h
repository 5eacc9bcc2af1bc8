// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Records audio from a real-time thread to a file: the audio thread pushes samples into a lock-free
// FIFO (never blocking, never allocating); a writer thread drains it to `path.part` and, on finish(),
// closes the file and renames it into place, so an interrupted run still leaves a complete, valid WAV
// and a crashed one leaves no file under the final name.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "dsp/SpscRing.h"
#include "io/WavFile.h"

namespace quell::io {

class StreamingWavWriter {
public:
    // Opens `path`.part; throws FileError. secondsOfBuffer: how long the writer may stall before the
    // audio thread has to drop samples (counted).
    StreamingWavWriter(const std::string& path, const AudioFormat& format, double secondsOfBuffer = 4.0);
    ~StreamingWavWriter();
    StreamingWavWriter(const StreamingWavWriter&) = delete;
    StreamingWavWriter& operator=(const StreamingWavWriter&) = delete;

    // Audio thread: interleaved frames. Returns false (and counts) if the FIFO is full.
    bool push(const float* interleaved, std::size_t frames) noexcept;

    // Drains, closes and renames. Returns the number of frames written. Throws FileError.
    std::uint64_t finish();

    std::uint64_t droppedFrames() const { return dropped_.load(); }

private:
    void writerLoop();
    std::string path_, partPath_;
    int channels_;
    void* file_ = nullptr; // SNDFILE*
    dsp::SpscRing fifo_;
    std::thread writer_;
    std::atomic<bool> running_{true};
    std::atomic<std::uint64_t> written_{0}, dropped_{0};
    std::atomic<bool> failed_{false};
    bool finished_ = false;
};

} // namespace quell::io
