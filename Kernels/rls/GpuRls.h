#pragma once
// The GPU RLS echo canceller (paper 001 on a modern GPU). Host-side interface: plain C++, no CUDA types.
// Same algorithm, order of operations and numerical safeguards as quell::dsp::Rls (its CPU twin).
//
// Threading: one thread at a time per object; the object owns its device memory and stream.
// prepare() allocates; process() does not allocate host memory (device staging is sized at prepare
// for `maxBlock` samples per channel and larger calls are split).
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "dsp/Rls.h"

namespace quell::gpu {

class GpuRls {
public:
    GpuRls();
    ~GpuRls();
    GpuRls(const GpuRls&) = delete;
    GpuRls& operator=(const GpuRls&) = delete;

    // channels: independent filters (one per call on a server), all with the same settings.
    // Throws std::invalid_argument on bad settings, quell::gpu::CudaError when the device fails.
    void prepare(const dsp::RlsSettings& settings, int channels = 1, std::size_t maxBlock = 4096);
    void reset();

    // Single channel: mic = d, ref = x, out = e, same length. out may alias mic.
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out);
    // All channels: planar buffers, channel c at [c * samples, (c + 1) * samples).
    void processBatch(const float* mic, const float* ref, float* out, std::size_t samples);

    std::vector<float> weights(int channel = 0) const;
    dsp::RlsHealth health(int channel = 0) const;
    int channels() const;
    int taps() const;
    // Which variant of the kernel runs (for reports): "persistent-smem", "persistent-global", "batched".
    const char* variant() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace quell::gpu
