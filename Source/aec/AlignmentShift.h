// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Whether moving the far end's alignment would throw away an echo path the filter already cancels.
//
// The delay estimator reports the lag of the strongest correlation; in a live room that is sometimes a
// reflection a few milliseconds after a weaker direct path (a corpus room at RT60 0.4 s: the estimate
// jumped to 6 ms in single talk after 5 s, the direct path fell before tap 0, and the cancelling filter
// became useless for the rest of the call). A filter that cancels knows where its path lies: delaying
// the far end by `shift` more samples pushes its first `shift` taps out of reach (shift < 0: its last
// taps), and whatever weight energy sits there is echo no filter can cancel after the move. So a move
// is refused while the output shows the filter cancels and the taps it would lose hold more than a
// small fraction of the weights' energy; after a real change of delay the old weights cancel nothing
// and the move goes ahead.
//
// Threading: any one thread; no allocation.
#include <span>

namespace quell::aec {

struct AlignmentShiftSettings {
    double cancellingDb = 10.0;          // recent echo reduction that shows the weights are the path
    double maxLostEnergyFraction = 1e-3; // -30 dB: the deepest reduction still reachable after the move
    double memorySegments = 50.0;        // the reduction's average, in segments with a playing far end
    double activeMeanSquare = 1e-7;      // far end below -70 dBFS: no evidence either way
};

class AlignmentShift {
public:
    void prepare(const AlignmentShiftSettings& settings = {});
    void reset();
    // One segment's energies: microphone, output, far end; `samples` long.
    void segment(double micEnergy, double outEnergy, double farEnergy, int samples);
    // Whether the output shows the filter cancels now.
    bool cancelling() const;
    // The fraction of the weights' energy (per far-end channel, `channels` blocks of equal length) a
    // move of the far end by `shift` samples (positive: delayed more) pushes out of the filter.
    static double lostEnergyFraction(std::span<const float> weights, int channels, int shift);
    // Whether the move may go ahead given the weights that cancel now.
    bool allows(std::span<const float> weights, int channels, int shift) const;
    // Counts a refused move to `target` (the same target proposed again and again counts once).
    void refused(long target);
    long refusals() const { return refusals_; }

private:
    AlignmentShiftSettings settings_{};
    double mic_ = 0.0, out_ = 0.0, decay_ = 0.98, cancelling_ = 10.0;
    long refusals_ = 0, lastRefused_ = -1;
};

} // namespace quell::aec
