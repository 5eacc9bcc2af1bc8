// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FarEndAligner.h"

#include <algorithm>
#include <cmath>

namespace quell::aec {

void FarEndAligner::prepare(const AlignerSettings& settings, const dsp::ProcessSpec& spec)
{
    settings_ = settings;
    spec_ = spec;
    if (settings.maxDelaySeconds > 0.0) {
        DelayEstimatorSettings d;
        d.maxDelaySeconds = settings.maxDelaySeconds;
        estimator_.prepare(d, spec);
        line_.prepare(spec.channels, static_cast<int>(std::ceil(settings.maxDelaySeconds * spec.sampleRate)));
    } else {
        line_.prepare(0, 0);
    }
    shift_.prepare({});
    drift_.prepare(settings.drift, spec);
    reset();
}

void FarEndAligner::reset()
{
    if (active())
        estimator_.reset();
    shift_.reset();
    drift_.reset();
    line_.reset();
    appliedDelay_ = 0;
    echoLag_ = 0;
    driftOffset_ = 0.0;
    sinceDriftMeasure_ = 0;
    driftMic_ = driftOut_ = 0.0;
}

void FarEndAligner::feed(std::span<const float> mic, std::span<const float> farSum, float* planar, std::size_t stride, std::size_t n)
{
    if (!active())
        return;
    const std::size_t channels = static_cast<std::size_t>(spec_.channels);
    estimator_.process(mic, farSum);
    const std::size_t len = line_.length();
    const double rate = drift_.rate();
    const double lowest = FractionalDelayReader::kHalfLength, highest = static_cast<double>(len) - lowest - 1.0;
    // Fractional reads only where the reader has room on both sides of the delay.
    const bool fractional = (rate != 0.0 || driftOffset_ != 0.0) && appliedDelay_ >= lowest && appliedDelay_ <= highest;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t c = 0; c < channels; ++c)
            line_.write(c, planar[c * stride + i]);
        if (fractional) {
            driftOffset_ = std::clamp(driftOffset_ + rate, lowest - appliedDelay_, highest - appliedDelay_);
            for (std::size_t c = 0; c < channels; ++c)
                planar[c * stride + i] = fractional_.read(line_.ring(c), len, line_.newest(), appliedDelay_ + driftOffset_);
        } else {
            for (std::size_t c = 0; c < channels; ++c)
                planar[c * stride + i] = line_.read(c, static_cast<std::size_t>(appliedDelay_));
        }
        line_.advance();
    }
}

bool FarEndAligner::decide(Path& path)
{
    if (!active() || !estimator_.found())
        return false;
    // The estimate is the strongest correlation, which is not always the direct path (a reflection,
    // or the far end's pitch period after it, can lead for a moment), and every move costs the
    // filter a restart. So the alignment moves only when the echo starts where the filter cannot
    // reach it well: before the margin (the direct path would fall off tap 0), or further in than
    // the settings' fraction of the filter (or 1.5 margins), where the pure delay wastes taps the
    // room's tail needs. And not at all while the weights that cancel now would lose part
    // of their path by it (AlignmentShift). Drift compensation moves the delay by itself; the
    // comparison is with where it has taken it.
    bool moved = false;
    const int margin = static_cast<int>(std::lround(settings_.marginSeconds * spec_.sampleRate));
    const int estimate = estimator_.delaySamples();
    const int target = std::clamp(estimate - margin, 0, line_.maxDelay());
    const long current = std::lround(appliedDelay_ + driftOffset_);
    const long into = estimate - current;
    const long tapsPerChannel = path.tapsPerChannel();
    const auto furthest = static_cast<long>(settings_.echoStartFraction * static_cast<double>(tapsPerChannel));
    const bool outOfReach = into < margin / 2 || into > std::max<long>(3 * margin / 2, furthest);
    if (target != current && outOfReach && shiftKeepsPath(target, static_cast<int>(target - current), path)) {
        appliedDelay_ = target;
        driftOffset_ = 0.0;
        drift_.forgetPositions();
        moved = true;
    }
    echoLag_ = static_cast<int>(std::max<long>(0, estimate - std::lround(appliedDelay_ + driftOffset_) - margin));
    return moved;
}

bool FarEndAligner::shiftKeepsPath(long target, int shift, Path& path)
{
    if (!shift_.cancelling())
        return true;
    if (shift_.allows(path.cancellingWeights(), spec_.channels, shift))
        return true;
    shift_.refused(target);
    return false;
}

void FarEndAligner::segment(double micEnergy, double outEnergy, double farEnergy, int samples, Path& path)
{
    shift_.segment(micEnergy, outEnergy, farEnergy, samples);
    if (!settings_.drift.enabled || !active())
        return;
    driftMic_ += micEnergy;
    driftOut_ += outEnergy;
    sinceDriftMeasure_ += samples;
    if (sinceDriftMeasure_ < drift_.measureInterval())
        return;
    const std::span<const float> w = path.cancellingWeights();
    const std::size_t perChannel = w.size() / static_cast<std::size_t>(spec_.channels);
    const bool converged = driftMic_ > 2.0 * driftOut_ && driftOut_ > 0.0;
    drift_.measure(w.first(perChannel), converged);
    sinceDriftMeasure_ = 0;
    driftMic_ = driftOut_ = 0.0;
}

} // namespace quell::aec
