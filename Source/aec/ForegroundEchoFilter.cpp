// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/ForegroundEchoFilter.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dsp/FloatDot.h"

namespace quell::aec {

void ForegroundEchoFilter::prepare(const ForegroundSettings& s)
{
    if (s.tapsPerChannel <= 0 || s.channels <= 0 || s.segmentSamples <= 0 || s.copyAfterSegments <= 0 || s.probationSegments < 0
        || s.refineProbationSegments < 1
        || !(s.copyWhenBelow > 0.0) || !(s.refineNoiseTolerance >= 1.0))
        throw std::invalid_argument("ForegroundEchoFilter: bad settings");
    settings_ = s;
    goodForeground_ = std::pow(10.0, -s.goodForegroundDb / 10.0);
    probationSegments_ = s.probationSegments > 0 ? s.probationSegments
                                                 : std::clamp((s.totalTaps() + 4 * s.segmentSamples - 1) / (4 * s.segmentSamples), 1, 2);
    w_.assign(static_cast<std::size_t>(s.totalTaps()), 0.0f);
    candidate_.assign(static_cast<std::size_t>(s.totalTaps()), 0.0f);
    line_.assign(2 * static_cast<std::size_t>(s.totalTaps()), 0.0f);
    reset();
}

void ForegroundEchoFilter::reset()
{
    std::fill(w_.begin(), w_.end(), 0.0f);
    std::fill(candidate_.begin(), candidate_.end(), 0.0f);
    std::fill(line_.begin(), line_.end(), 0.0f);
    pos_ = 0;
    segMic_ = segFg_ = segBg_ = segCandidate_ = 0.0;
    inSegment_ = better_ = refine_ = 0;
    copies_ = rejected_ = 0;
    probing_ = false;
    probeGood_ = probeRefines_ = false;
    probed_ = 0;
    probeFg_ = probeCandidate_ = 0.0;
    restarted_ = false;
    floor_ = -1.0;
}

void ForegroundEchoFilter::copyFrom(const LinearEchoFilter& source)
{
    source.copyWeights(w_);
    ++copies_;
    restarted_ = false;
}

float ForegroundEchoFilter::step(float d, const float* ref)
{
    const std::size_t channels = static_cast<std::size_t>(settings_.channels);
    const std::size_t taps = w_.size() / channels;
    // line_[c * 2 taps + pos_ + k] = x_c(n - k): newest first, as the RLS regressor u(n).
    pos_ = pos_ == 0 ? taps - 1 : pos_ - 1;
    for (std::size_t c = 0; c < channels; ++c) {
        float* line = &line_[c * 2 * taps];
        line[pos_] = ref[c];
        line[pos_ + taps] = ref[c];
    }
    // The foreground's estimate, and the candidate's in the same pass while one is on probation.
    float fg = 0.0f, candidate = 0.0f;
    for (std::size_t c = 0; c < channels; ++c) {
        const float* u = &line_[c * 2 * taps + pos_];
        if (probing_) {
            const dsp::FloatDotPair dots = dsp::floatDotPair(&w_[c * taps], &candidate_[c * taps], u, taps);
            fg += dots.a;
            candidate += dots.b;
        } else {
            fg += dsp::floatDot(&w_[c * taps], u, taps);
        }
    }
    const float ef = d - fg;
    segMic_ += double(d) * d;
    segFg_ += double(ef) * ef;
    if (probing_) {
        const float ec = d - candidate;
        segCandidate_ += double(ec) * ec;
    }
    ++inSegment_;
    return ef;
}

void ForegroundEchoFilter::process(std::span<const float> mic, std::span<const float> ref,
                                   std::span<const float> background, std::span<float> out,
                                   const LinearEchoFilter& source)
{
    const std::size_t channels = static_cast<std::size_t>(settings_.channels);
    if (ref.size() != mic.size() * channels || background.size() != mic.size() || out.size() < mic.size())
        throw std::invalid_argument("ForegroundEchoFilter::process: lengths differ");
    if (inSegment_ == settings_.segmentSamples && !mic.empty())
        throw std::logic_error("ForegroundEchoFilter::process: processAhead() ended a segment; catchUp() first");
    for (std::size_t n = 0; n < mic.size(); ++n) {
        const float eb = background[n];   // read before out[n], which may alias it
        out[n] = step(mic[n], &ref[n * channels]);
        segBg_ += double(eb) * eb;
        if (inSegment_ == settings_.segmentSamples) {
            concludeProbation();
            decideSnapshot([&](std::vector<float>& into) { source.copyWeights(into); });
        }
    }
}

void ForegroundEchoFilter::processAhead(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
{
    const std::size_t channels = static_cast<std::size_t>(settings_.channels);
    if (ref.size() != mic.size() * channels || out.size() < mic.size())
        throw std::invalid_argument("ForegroundEchoFilter::processAhead: lengths differ");
    if (mic.size() > static_cast<std::size_t>(samplesToSegmentEnd()))
        throw std::invalid_argument("ForegroundEchoFilter::processAhead: past the segment's end");
    for (std::size_t n = 0; n < mic.size(); ++n)
        out[n] = step(mic[n], &ref[n * channels]);
    if (inSegment_ == settings_.segmentSamples)
        concludeProbation();
}

void ForegroundEchoFilter::catchUp(std::span<const float> background, std::span<const float> weightsAtSegmentEnd)
{
    for (const float eb : background)
        segBg_ += double(eb) * eb;
    if (inSegment_ == settings_.segmentSamples)
        decideSnapshot([&](std::vector<float>& into) { copyPadded(weightsAtSegmentEnd, into); });
}

void ForegroundEchoFilter::concludeProbation()
{
    below_ = restarted_ ? settings_.copyAfterRestartBelow : settings_.copyWhenBelow;
    // Good: the foreground reduces the microphone by goodForegroundDb, or its output is near its own
    // quietest segments (at 10 dB of echo-to-noise a good filter's output is noise, 10 dB under the
    // microphone, and good all the same). Otherwise: double talk, a path change, or still converging.
    const bool atNoiseFloor = segFg_ <= 4.0 * floor_;
    good_ = !restarted_ && (segFg_ <= goodForeground_ * segMic_ || atNoiseFloor);
    if (probing_) {
        // The snapshot, held still, against the foreground on the same samples, over probationSegments_.
        // Where the foreground leaves much of the microphone, a snapshot that has learnt the near end along
        // with the echo can predict it from the far end for a few milliseconds more (both talkers' spectra
        // change slowly) and beat the foreground by a dB or two: there it must be clearly better. A good
        // foreground is refined by any snapshot that is no worse: with the noise dominating both errors a
        // better filter shows as a fraction of a dB. And the snapshot must be no worse than the
        // foreground in any segment of its probation: a path it has learnt stays learnt, while what it
        // fitted of a talker through an unrelated far end fades within tens of milliseconds. The longer
        // the filter the more it can fit (4096 taps with 2.6 s of memory fitted a lone near-end talker
        // through -50 dBFS of far-end line noise and beat the foreground by 3.7 dB over the next 10 ms),
        // so the probation lasts a quarter of the filter's length, up to two segments; a good
        // foreground's refinement, one (ForegroundSettings::refineProbationSegments: a snapshot held longer
        // is outdated wherever the far end moves on, as music does).
        probeFg_ += segFg_;
        probeCandidate_ += segCandidate_;
        const bool foregroundIsNoise = probeGood_ && atNoiseFloor && removesEcho();
        const bool worse = segCandidate_ > (foregroundIsNoise ? settings_.refineNoiseTolerance : 1.0) * segFg_;
        if (worse || ++probed_ >= (probeRefines_ ? settings_.refineProbationSegments : probationSegments_)) {
            probing_ = false;
            const double needed = restarted_ ? below_ : probeGood_ ? settings_.refineWhenBelow : settings_.copyWhenLeavingMuchBelow;
            if (copying_ && !worse && probeCandidate_ <= needed * probeFg_) {
                std::swap(w_, candidate_);
                ++copies_;
                restarted_ = false;
                better_ = refine_ = 0;
            } else {
                ++rejected_;
            }
        }
    }
    // The quietest segments rise by 1 dB/s.
    floor_ = floor_ < 0.0 || segFg_ < floor_ ? segFg_ : floor_ * 1.0023;
}

template <typename CopyWeights>
void ForegroundEchoFilter::decideSnapshot(CopyWeights&& copy)
{
    better_ = segBg_ < below_ * segFg_ ? better_ + 1 : 0;
    refine_ = good_ && segBg_ <= settings_.refineWhenBelow * segFg_ ? refine_ + 1 : 0;
    // After a restart the bar is 10 dB: one segment over it is evidence enough to go on probation.
    const int after = restarted_ ? 1 : settings_.copyAfterSegments;
    if (copying_ && !probing_ && (better_ >= after || refine_ >= settings_.refineAfterSegments)) {
        copy(candidate_);
        probing_ = true;
        probeGood_ = good_;
        // A refinement: the foreground is good and removes echo (at least 3 dB: a foreground of zeros over
        // a steady echo is at its own noise floor, good by that test, and removes nothing).
        probeRefines_ = good_ && removesEcho();
        probed_ = 0;
        probeFg_ = probeCandidate_ = 0.0;
        better_ = refine_ = 0;
    }
    segMic_ = segFg_ = segBg_ = segCandidate_ = 0.0;
    inSegment_ = 0;
}

} // namespace quell::aec
