// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The adaptive linear filter at the heart of the echo canceller, behind one small interface so the
// CPU RLS (Source/dsp) and the GPU RLS (Kernels/rls) are interchangeable at run time.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dsp/Pbfdkf.h"
#include "dsp/Rls.h"

namespace quell::aec {

// w into out (out's length: taps beyond w are zero, taps beyond out dropped), as copyWeights() gives them.
inline void copyPadded(std::span<const float> w, std::span<float> out)
{
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = i < w.size() ? w[i] : 0.0f;
}

class LinearEchoFilter {
public:
    virtual ~LinearEchoFilter() = default;
    // mic = d, ref = x, out = e (the echo-cancelled microphone); same length; out may alias mic.
    virtual void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out) = 0;
    // Several far-end channels, interleaved (the filter's channels x mic.size() samples).
    virtual void processInterleaved(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
    {
        process(mic, ref, out);
    }
    // Two runs of samples in one call: [0, split) as process() would, then the weights as they are there
    // into weightsAtSplit (as copyWeights()), the covariance restarted there if restartAtSplit, adaptation
    // set to adaptAfter, and [split, size) (ref: the channels interleaved, as processInterleaved()). The
    // same as those calls one after the other; the GPU filter makes it one round trip to the device
    // instead of two or three (EchoCanceller: a segment's end inside a host block).
    virtual void processSplit(std::span<const float> mic, std::span<const float> ref, std::span<float> out, std::size_t split,
                              bool restartAtSplit, bool adaptAfter, std::span<float> weightsAtSplit)
    {
        const std::size_t c = static_cast<std::size_t>(channels());
        processChannels(mic.first(split), ref.first(split * c), out.first(split));
        copyWeights(weightsAtSplit);
        if (restartAtSplit)
            restartCovariance();
        setAdaptation(adaptAfter);
        processChannels(mic.subspan(split), ref.subspan(split * c), out.subspan(split, mic.size() - split));
    }
    // process() for one far-end channel, processInterleaved() for more (ref: channels() interleaved).
    void processChannels(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
    {
        if (channels() == 1)
            process(mic, ref, out);
        else
            processInterleaved(mic, ref, out);
    }
    virtual void reset() = 0;
    // The length per far-end channel, and the far-end channels (weights() holds taps() x channels()).
    virtual int taps() const = 0;
    virtual int channels() const = 0;
    virtual std::vector<float> weights() const = 0;
    // The weights into `out` (its length; missing taps are zero). The default goes through weights() and
    // allocates; the CPU and GPU filters override it without allocating (it runs on the real-time thread).
    virtual void copyWeights(std::span<float> out) const { copyPadded(weights(), out); }
    // P = I / delta with the weights kept (RLS); filters without a covariance ignore it.
    virtual void restartCovariance() {}
    // P = I / delta at every later restart, the filter's own included, until reset() (which goes back to
    // the settings' delta): FarEndLevelMatch.h says why. Returns whether the filter takes it; filters
    // without a covariance prior (the Kalman filter, NLMS) do not.
    virtual bool setRestartDelta(double /*delta*/) { return false; }
    // Off: the weights (and any covariance) stay as they are from the next sample on; the output is still
    // the microphone minus the filter's estimate.
    virtual void setAdaptation(bool on) = 0;
    virtual dsp::RlsHealth health() const = 0;
    virtual std::string description() const = 0;
    virtual bool onGpu() const = 0;
};

// The filters, as a FilterPlan (FilterPlan.h) describes them; the plan has checked the settings.
// RLS on the CPU: one far-end channel as dsp::FastRls, two as dsp::StereoFastRls (float64, O(N) per
// sample), more as float32 dsp::Rls. threads: as dsp::Rls::setWorkerThreads (0 = automatic; the fast RLS runs on the caller's).
// One far-end channel from 2048 taps on: fast RLS filters of the length asked for and of
// fastRlsCompanionTaps() beside it, the one with the lowest error leading (CpuRlsFilter.cpp says why).
std::unique_ptr<LinearEchoFilter> makeCpuRlsFilter(const dsp::RlsSettings& settings, int threads = 0);
// The shorter fast RLS filters beside a mono one of `taps`: a half and a quarter of it from 2048 taps on,
// none below.
std::vector<int> fastRlsCompanionTaps(int taps);
// float32 partitioned-block frequency-domain Kalman filter on the CPU (dsp::Pbfdkf).
std::unique_ptr<LinearEchoFilter> makeCpuKalmanFilter(const dsp::PbfdkfSettings& settings);
// Two far-end channels on the CPU: the two-channel fast RLS of `stereo` where given, the Kalman filter of
// `kalman` (two channels), the two-channel fast RLS of `half` where given (with `stereo` only; at most
// its taps) and the fast RLS of `mean` (one channel, makeCpuRlsFilter) on the channels' mean, side by
// side, the one with the lowest error leading (CpuStereoFilter.cpp says why).
std::unique_ptr<LinearEchoFilter> makeCpuStereoFilter(const dsp::PbfdkfSettings& kalman, const dsp::RlsSettings& mean,
                                                      const std::optional<dsp::RlsSettings>& stereo = std::nullopt,
                                                      const std::optional<dsp::RlsSettings>& half = std::nullopt);
// float32 NLMS on the CPU, one far-end channel.
std::unique_ptr<LinearEchoFilter> makeCpuNlmsFilter(int taps);
// float32 RLS on the GPU (throws std::invalid_argument where gpuRlsWhyNot() has a reason).
std::unique_ptr<LinearEchoFilter> makeGpuRlsFilter(const dsp::RlsSettings& settings, std::size_t maxBlock);

// Samples per second the GPU RLS runs at with these settings, called with blocks of `block` samples
// (timed on noise after a warm-up, a few tens of milliseconds); 0 when no GPU RLS can run them.
double measureGpuRlsSamplesPerSecond(const dsp::RlsSettings& settings, std::size_t block);

} // namespace quell::aec
