// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Clock drift between the far end's clock and the microphone's (quell-live with separate playback and
// capture devices, or a far end captured from another card): the echo slides against the reference by
// (f_mic - f_far) / f_far samples per sample, 1.6 samples a second at 100 ppm. An RLS with 0.6 s of
// memory cannot follow a path that keeps moving: measured here, 100 ppm takes a converged canceller from
// 80 dB to 12 dB of echo reduction. The echo canceller therefore reads the far end at a fractional delay
// that advances by rate() every sample, and this class estimates that rate, closed loop, from where the
// echo path's main peak sits in the adaptive filter over time.
//
// Every `measureSeconds` the peak of |w| (the first far-end channel's part) is located to a fraction of
// a tap (parabola through the largest tap and its neighbours) while the filter cancels well; a straight
// line through the last measurements (at least `minSpanSeconds`) gives the remaining drift, which is
// added to the rate with `gain` and the measurements restart. A fit that is not a line (the path
// changed, the filter re-converged) is discarded. Without drift the slope is noise around zero and the
// rate stays within a few ppm of it.
//
// Threading: one thread; no allocation after prepare().
#include <cstddef>
#include <span>
#include <vector>

#include "dsp/ProcessSpec.h"

namespace quell::aec {

struct DriftSettings {
    bool enabled = true;
    double measureSeconds = 0.25;
    double minSpanSeconds = 3.0;
    int maxPoints = 32;
    double gain = 0.8;
    double maxPpm = 1000.0;
    double maxResidualTaps = 0.3;   // RMS distance of the measurements from their line
    bool operator==(const DriftSettings&) const = default;
};

class ClockDriftTracker {
public:
    void prepare(const DriftSettings& settings, const dsp::ProcessSpec& spec);   // spec: the rate
    void reset();
    // Samples between measurements.
    int measureInterval() const { return interval_; }
    // One measurement: the filter's weights (one far-end channel's taps) and whether it cancels well.
    void measure(std::span<const float> weights, bool converged);
    // The far end's fractional delay changes by this many samples per sample.
    double rate() const { return rate_; }
    double ppm() const { return rate_ * 1e6; }
    // The applied delay jumped (the bulk-delay tracker moved it): old peak positions mean nothing now.
    void forgetPositions() { count_ = 0; }
    long updates() const { return updates_; }

private:
    DriftSettings settings_{};
    int interval_ = 4000;
    int minPoints_ = 12;
    std::vector<double> peaks_;   // peak positions, oldest first; measurement k at time k * interval
    int count_ = 0;
    double rate_ = 0.0;
    long updates_ = 0;
};

} // namespace quell::aec
