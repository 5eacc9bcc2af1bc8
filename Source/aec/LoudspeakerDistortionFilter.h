// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The echo of a loudspeaker driven into distortion, which no linear filter models: fitted and taken off
// the microphone before the linear filters, so that they learn the room from an echo they can explain.
//
// Model (Hammerstein): echo = h * f(x), a memoryless loudspeaker nonlinearity f followed by the room h.
// The linear filter has learnt w = c h (c: f's gain at the far end's level), so the distortion's echo is
// h * (f(x) - c x): the room's response to what the loudspeaker adds. f is taken as x plus clippers'
// excesses, f(x) = c x + sum_j b_j (clip(x, k_j s) - x) (clip(x, t) = x limited to [-t, t]; s the far
// end's RMS level; knees k = 1, 2, 4), which follows a soft or hard saturation; the regressors are the
// same weights applied to those excesses, z_j = w * (clip(x, k_j s) - x), and
//   distortion = sum_j b_j z_j,   b = the least-squares fit of the linear output e on (w * x, z_1..z_3)
// over the last `memorySeconds` of segments the far end could explain (the linear estimate's term keeps
// the fit unbiased; only the clippers' terms are taken off). Four numbers describe the loudspeaker, not
// the room: the room is w, which the linear filter keeps following, so the model is right again as soon
// as the foreground changes; it costs three dot products of the filter's length per sample; and a fit of
// four numbers over seconds cannot learn the near end. Its normal equations are solved once per segment,
// scaled to unit diagonal with ridge regularisation (`ridge`), so a far end that hardly excites them
// cannot wind it up.
//
// Measured (memoryless fit of the corpus's tanh loudspeakers to the far end's speech): polynomial terms x^3,
// x^5 leave the distortion 45.7 dB down at 18 dB SDR but only 24.7 dB at 10 dB SDR, and in the canceller
// their fit of the loudest peaks ran away; the clippers leave 40.4 and 37.5 dB (each clipper's excess,
// clip(x) - x, is the regressor: the clipped signal itself is so close to x that the fit traded huge
// opposite coefficients with the linear filter and diverged). Fitting after the linear filter instead of
// before it took only 3 dB off an 18 dB SDR distortion in a room the filter covers (the filter whose
// weights make the regressors had itself been pulled by the distortion); before it, the linear output's
// reduction went from 16.6 to 25.9 dB (29.8 with no distortion). With the residual suppressor behind it
// the gain shrinks or turns into a loss: see EchoCancellerSettings::distortionFilter.
//
// Why not a nonlinear expansion as a second channel of the RLS: twice the taps is four times the RLS's
// work (4096 taps at 3.4 times real time on the H100 would not be real time), and the second channel's
// thousands of weights must be learnt again for every echo path the room takes.
//
// Safety: the fit is taken off only while its clipper terms reduce the linear output by at least
// `minGainDb` over the fit's memory (beyond what the linear estimate's term does); otherwise the stage
// estimates exactly zero and the canceller's output is what it would be without it, bit for bit.
// Switching on and off is a crossfade over one segment.
//
// Threading: prepare() off the real-time thread; the rest from one thread; no allocation after prepare.
#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "dsp/ProcessSpec.h"

namespace quell::aec {

struct DistortionFilterSettings {
    int tapsPerChannel = 1024;
    int segmentSamples = 160;
    double memorySeconds = 4.0;
    double ridge = 1e-4;
    double minGainDb = 0.5;
};

class LoudspeakerDistortionFilter {
public:
    static constexpr std::size_t kClippers = 3;
    static constexpr std::array<float, kClippers> kKnees = {1.0f, 2.0f, 4.0f};   // x the far end's RMS
    static constexpr std::size_t kTerms = kClippers + 1;                         // and the linear estimate

    // spec: the rate and the far end's channels (those of the linear filter's weights).
    void prepare(const DistortionFilterSettings& settings, const dsp::ProcessSpec& spec);
    void reset();
    // ref: the aligned far end, channels interleaved (as the linear filter's); weights: the linear filter
    // whose echo estimate the output is (planar, tapsPerChannel per channel). distortion = the fitted
    // distortion echo, to take off the microphone before the linear filters. At most the samples left in
    // the segment.
    void estimate(std::span<const float> ref, std::span<const float> weights, std::span<float> distortion);
    // The same samples after the linear filter: mic as it came, out = mic less distortion less the
    // linear filter's estimate.
    void observe(std::span<const float> mic, std::span<const float> out);
    // Advances the far-end history without filtering (the stage idle).
    void skip(std::span<const float> ref);
    // The end of a segment: learn from it when `learn` (the far end could explain the microphone);
    // learnNext: whether the next one will be learnt from (when not, and no fit is in use, the next
    // segment costs no dot products).
    void segmentEnd(bool learn, bool learnNext);

    bool active() const { return active_; }
    // What the fit's clipper terms take off the linear output over its memory, in dB (0: no fit).
    double gainDb() const { return gainDb_; }
    // The fit: the linear estimate's term, then the clippers' (zero while not active).
    const std::array<double, kTerms>& coefficients() const { return a_; }

private:
    void push(std::span<const float> ref, std::size_t n);

    DistortionFilterSettings settings_{};
    dsp::ProcessSpec spec_{};
    // Per clipper and channel: twice the taps (the newest window contiguous).
    std::array<std::vector<float>, kClippers> lines_;
    std::array<std::vector<float>, kClippers> z_;   // the segment's regressors
    std::vector<float> nl_;                         // the segment's distortion estimate
    std::size_t pos_ = 0;
    std::array<double, kTerms * kTerms> r_{}, segR_{};   // normal equations: sum z z^T (lower triangle)
    std::array<double, kTerms> p_{}, segP_{};            // sum z e
    double ee_ = 0.0, segEe_ = 0.0, segFar_ = 0.0, farPower_ = 0.0, seen_ = 0.0;
    std::array<float, kClippers> knee_{};   // the clippers' thresholds in use
    std::array<double, kTerms> a_{};
    std::array<float, kClippers> applied_{}, previous_{};
    double decay_ = 0.99, gainDb_ = 0.0;
    bool active_ = false, wasActive_ = false, needed_ = true;
    int inSegment_ = 0;
};

} // namespace quell::aec
