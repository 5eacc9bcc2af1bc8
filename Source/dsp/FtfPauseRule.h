// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the fast transversal filters (dsp::FastRls, dsp::StereoFastRls) do around their recursion when the
// far end pauses, and the dither of their predictors' copy of the far end. FastRls.h says why each is so:
// paused, the predictors go on and the weights stay; a pause longer than what the weights have learnt
// from since the predictors' start restarts the predictors when adaptation resumes.
//
// Threading: the filter's.
#include <algorithm>

namespace quell::dsp::detail {

class FtfPauseRule {
public:
    // Each sample: whether it adapts (told to, and the far end audible over the taps); sets restart where
    // the predictors must restart before it.
    bool adapts(bool told, bool audible, bool& restart)
    {
        restart = false;
        const bool adapt = told && audible;
        if (!adapt) {
            ++pausedRun_;
        } else if (pausedRun_ > 0) {
            restart = pausedRun_ > adaptedRun_;
            pausedRun_ = 0;
        }
        return adapt;
    }
    // A sample the weights learnt from.
    void adapted() { adaptedRun_ = std::min(adaptedRun_ + 1, kAdaptedRunCap); }
    // The predictors (re)started: nothing learnt since.
    void predictorsStarted() { adaptedRun_ = 0; }
    void reset() { pausedRun_ = 0; }

private:
    static constexpr long kAdaptedRunCap = 960000;   // (counted up to a minute at 16 kHz)
    long pausedRun_ = 0, adaptedRun_ = 0;             // samples paused in a row; adapted since the predictors' start
};

// The predictors' dither: uniform, peak `peak`, from a 32-bit linear congruential sequence.
inline double ftfDither(unsigned& state, double peak)
{
    state = state * 1664525u + 1013904223u;
    return peak * (double(state >> 8) * (2.0 / double(1u << 24)) - 1.0);
}

} // namespace quell::dsp::detail
