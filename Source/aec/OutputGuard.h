// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The linear filter's output must never be louder than the microphone: an echo canceller that adds sound
// (a filter diverging, a covariance just re-initialised, a stale filter right after the echo path
// changed, a filter that learnt the near end from a far end of noise) is worse than none. This guard
// compares the two, sample by sample, and plays the microphone instead while the output is louder.
//
// Two detectors on running energies: a short one (`shortSeconds`, a burst more than `shortDb` over the
// microphone: divergence must not reach the ear even for a few milliseconds) and a long one
// (`longSeconds`, more than `longDb` over it: a quietly worse output over a word). The switch to the
// microphone and back is a raised-cosine crossfade of `crossfadeSeconds`; the way back is at once when the
// short energy is `clearDb` below the microphone's (the filter cancels), else after it has been no louder
// than the microphone for `holdSeconds`. With a working filter the output is far below the microphone and
// the guard passes it untouched (bit-exact).
//
// It decides from the samples up to the present one (no look-ahead, no latency); the residual echo
// suppressor, which has a frame of look-ahead, checks its frames again.
//
// Threading: prepare() off the real-time thread; process() from one thread; no allocation.
#include <cstddef>
#include <span>

#include "dsp/ProcessSpec.h"

namespace quell::aec {

struct OutputGuardSettings {
    double shortSeconds = 0.004;
    // Not 3 dB: in double talk a filter that cancels is louder than the microphone wherever the echo
    // happened to cancel part of the near end in the air, by 3 to 4 dB over a few milliseconds in the
    // corpus's stereo and music double talk. At 3 dB the guard played the microphone's echo there (a
    // perfect canceller's output, near end plus noise, tripped it twice in the stereo file), which cost
    // the near end 2.7 dB after the fit (27.9 -> 30.5 dB at 6 dB, CPU defaults) and music's 4.1. A
    // filter a few dB louder for longer is the long detector's; the unit test's diverged output, 20 dB
    // over the microphone, is the microphone within 10 ms as before.
    double shortDb = 6.0;
    double longSeconds = 0.05;
    double longDb = 0.5;
    double crossfadeSeconds = 0.002;
    double holdSeconds = 0.005;
    double clearDb = 10.0;
};

class OutputGuard {
public:
    void prepare(const OutputGuardSettings& settings, const dsp::ProcessSpec& spec);   // spec: the rate
    void reset();
    // mic = d, out = the linear output, replaced in place where it is louder than d.
    void process(std::span<const float> mic, std::span<float> out);
    // Samples played (wholly or partly) from the microphone since prepare() or reset().
    long fallbackSamples() const { return fallbackSamples_; }
    bool fallingBack() const { return mix_ > 0.0f; }

private:
    double shortA_ = 0.0, longA_ = 0.0, shortRatio_ = 2.0, longRatio_ = 1.12, clearRatio_ = 0.1;
    double shortOut_ = 0.0, shortMic_ = 0.0, longOut_ = 0.0, longMic_ = 0.0;
    float step_ = 0.01f, mix_ = 0.0f;   // mix_: the microphone's share, 0..1
    int holdSamples_ = 0, quiet_ = 0;
    bool active_ = false;
    long fallbackSamples_ = 0;
};

} // namespace quell::aec
