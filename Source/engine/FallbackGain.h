// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The gain a late block plays the delayed microphone at: the canceller's output level over the
// microphone's during the blocks just before, never above 1. A late block used to play the microphone
// as it was, so in far-end single talk a single late 512-frame block at 48 kHz (10.7 ms of the whole
// echo) took the plugin's steady ERLE on the corpus's small room from 32.1 to 24.7 dB; at the gain the
// output had, the echo stays as low as the canceller had brought it, and a near-end talker the canceller
// let through (gain near 1) still comes through. Broadband, like a suppressor that has stopped
// adapting for one block: it is what the audio thread can do with no filter of its own.
//
// Threading: observe() and reset() from the worker (reset() also from a control thread while no worker
// runs); gain() from the audio thread (one relaxed atomic load).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>

namespace quell::engine {

class FallbackGain {
public:
    // sampleRate: the rate of the samples observe() gets.
    void prepare(int sampleRate)
    {
        sampleRate_ = sampleRate;
        reset();
    }

    void reset()
    {
        mic_ = out_ = 0.0;
        gain_.store(1.0f, std::memory_order_relaxed);
    }

    // The energies (sums of squares) of the microphone a worker call took and of the output it produced,
    // over `frames` samples (the pipeline's few milliseconds of delay between them are far inside the
    // averaging time).
    void observe(double micEnergy, double outEnergy, std::size_t frames)
    {
        const double keep = std::exp(-double(frames) / (kAveragingSeconds * sampleRate_));
        mic_ = keep * mic_ + micEnergy;
        out_ = keep * out_ + outEnergy;
        // A floor far below any real signal: a silent microphone gives 1 (nothing to attenuate).
        const double floor = 1e-12 * kAveragingSeconds * sampleRate_;
        gain_.store(static_cast<float>(std::min(1.0, std::sqrt((out_ + floor) / (mic_ + floor)))), std::memory_order_relaxed);
    }

    float gain() const noexcept { return gain_.load(std::memory_order_relaxed); }

    // Short enough to follow a talker's onset within a few blocks, long enough that one quiet block of
    // output does not make the gain jump.
    static constexpr double kAveragingSeconds = 0.03;

private:
    int sampleRate_ = 48000;
    double mic_ = 0.0, out_ = 0.0;
    std::atomic<float> gain_{1.0f};
};

} // namespace quell::engine
