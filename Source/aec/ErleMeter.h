// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Echo return loss enhancement: microphone power over output power, per 100 ms frame while the far end
// is active, and over the steady state (everything after a warm-up that excludes initial convergence).
//
// A frame counts as "far end active" when its reference RMS is above -60 dBFS and within 30 dB of the
// loudest reference frame seen in the whole signal (so pauses between words are not counted).
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace quell::aec {

struct ErleReport {
    double frameSeconds = 0.1;
    std::vector<std::optional<double>> perFrameDb;  // empty where the far end is inactive
    std::optional<double> steadyStateDb;            // over active frames after the warm-up
    std::size_t activeFrames = 0;
};

class ErleMeter {
public:
    ErleMeter(int sampleRate, double warmupSeconds = 1.0, double frameSeconds = 0.1);
    // Feed aligned blocks of any size (all three the same length).
    void add(std::span<const float> mic, std::span<const float> out, std::span<const float> ref);
    ErleReport report() const;

private:
    struct Frame {
        double mic = 0.0, out = 0.0, ref = 0.0;
    };
    double warmupSeconds_, frameSeconds_;
    std::size_t frameLength_;
    std::vector<Frame> frames_;
    Frame current_{};
    std::size_t inCurrent_ = 0;
};

} // namespace quell::aec
