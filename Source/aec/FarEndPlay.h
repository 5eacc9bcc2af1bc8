// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Whether the far end plays in a frame: the frame's energy holds a quarter of the far end's recent mean
// or more. The mean rises fast (0.05 a frame) and falls slowly (0.005), so an onset counts at once and a
// pause does not pull the bar down to the silence; in the tail after a phrase what reaches the
// microphone is reverberation, not the far end's present. One rule for the residual echo suppressor's
// frames and EchoToNoiseMeter's segments.
//
// Threading: one thread.
namespace quell::aec {

class FarEndPlay {
public:
    // A frame of `minimumEnergy` or less never plays.
    explicit FarEndPlay(double minimumEnergy) : minimum_(minimumEnergy) {}
    void reset() { mean_ = 0.0; }
    // One frame's energy: whether the far end plays in it.
    bool update(double energy)
    {
        mean_ += (energy > mean_ ? 0.05 : 0.005) * (energy - mean_);
        return energy > minimum_ && energy >= 0.25 * mean_;
    }

private:
    double minimum_;
    double mean_ = 0.0;
};

} // namespace quell::aec
