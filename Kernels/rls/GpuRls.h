// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The GPU RLS echo canceller (paper 001 on a modern GPU). Host-side interface: plain C++, no CUDA types.
// Same algorithm, order of operations and numerical safeguards as quell::dsp::Rls (its CPU twin).
//
// Threading: one thread at a time per object; the object owns its device memory and stream.
// prepare() allocates; process() does not allocate host memory (device staging is sized at prepare
// for `maxBlock` samples per channel and larger calls are split).
//
// The CUDA sources are compiled as C++17 (no std::span there): the core API takes pointers and sizes;
// the std::span convenience exists for C++20 callers only.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>
#if __cplusplus >= 202002L
#include <span>
#endif

#include "dsp/RlsSettings.h"
#include "rls/RlsLaunchPolicy.h"

namespace quell::gpu {

// The longest filter the GPU RLS runs, over all far-end channels together (P of 8192^2 floats is 256 MiB
// per channel; longer filters are the CPU's).
inline constexpr int kGpuRlsMaxTaps = 8192;

class GpuRls {
public:
    GpuRls();
    ~GpuRls();
    GpuRls(const GpuRls&) = delete;
    GpuRls& operator=(const GpuRls&) = delete;

    // channels: independent filters (one per call on a server), all with the same settings; each filter's
    // far end may have settings.channels = 1 or 2 channels (2: taps per channel a multiple of 4).
    // Throws std::invalid_argument on bad settings, quell::gpu::CudaError when the device fails.
    void prepare(const dsp::RlsSettings& settings, int channels = 1, std::size_t maxBlock = 4096);
    // Same, with the kernel layout given (fields left at their defaults are chosen); used by the
    // benchmark to sweep layouts. Throws std::invalid_argument when the layout cannot run.
    void prepare(const dsp::RlsSettings& settings, int channels, std::size_t maxBlock,
                 const RlsLaunchPolicy& policy);
    void reset();
    // Why prepare(settings, channels, maxBlock) would refuse on the current device (bad settings, too
    // long, far-end channels it does not take, no layout that fits the device), or empty when it would
    // run. Never throws: a failing device is a reason too. The one answer to "can this run on the GPU".
    static std::string whyNot(const dsp::RlsSettings& settings, int channels, std::size_t maxBlock);
    // Whether the GPU RLS takes these far-end channels: 1, or 2 with a multiple of 4 taps each (a float4
    // chunk of u must lie in one channel). prepare() throws std::invalid_argument otherwise.
    static bool takesFarEndChannels(const dsp::RlsSettings& settings);

    // Single channel: mic = d, ref = x, out = e, `samples` each; with settings.channels = 2 far-end
    // channels (a stereo far end, stacked in u as dsp::Rls does) ref holds them interleaved, 2 x samples.
    // out may alias mic.
    void process(const float* mic, const float* ref, float* out, std::size_t samples);
#if __cplusplus >= 202002L
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out)
    {
        checkLengths(mic.size(), ref.size(), out.size());
        process(mic.data(), ref.data(), out.data(), mic.size());
    }
#endif
    // All channels: planar buffers, channel c at [c * samples, (c + 1) * samples) (ref: at
    // [c * samples * farEnd, ...), its far-end channels interleaved).
    void processBatch(const float* mic, const float* ref, float* out, std::size_t samples);

    std::vector<float> weights(int channel = 0) const;
    // The first `count` weights of a channel into `out` (count <= taps), without allocating: the echo
    // canceller's foreground copy runs on the real-time thread.
    void copyWeights(int channel, float* out, std::size_t count) const;
    // P = I / delta for one channel, weights kept (dsp::Rls::restartCovariance): between process()
    // calls, from the thread that calls them.
    void restartCovariance(int channel = 0);
    dsp::RlsHealth health(int channel = 0) const;
    // Off: the kernel updates no w and no P from the next process() call on (every sample is paused, as
    // on far-end silence), for all channels; as dsp::Rls::setAdaptation.
    void setAdaptation(bool on);
    int channels() const;
    int taps() const;
    // Which variant of the kernel runs (for reports): "persistent-smem", "persistent-global",
    // "persistent-cluster", "batched", "batched-cluster".
    const char* variant() const;
    // The layout in use, resolved, and the blocks one channel is spread over.
    RlsLaunchPolicy policy() const;
    int blocksPerChannel() const;
    // Device time of the kernels of the last process()/processBatch() call, in milliseconds.
    double lastKernelMilliseconds() const;

private:
    void checkLengths(std::size_t mic, std::size_t ref, std::size_t out) const;
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace quell::gpu
