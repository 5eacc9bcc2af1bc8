// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// GPU rational polyphase resampler (output rate = input rate * L / M), the GPU twin of
// quell::dsp::PolyphaseResampler: the same Kaiser-windowed sinc prototype (designResamplerPrototype), the
// same phase bookkeeping, so its outputs match the CPU's sample for sample (to float rounding) and its
// group delay is the CPU's. Host-side interface: plain C++17, no CUDA types.
//
// Channels: planar; all channels advance together. Streaming: the last taps-per-phase - 1 inputs of each
// channel and the phase position are carried across calls.
// Threading: one thread at a time per object; prepare() allocates; processDevice() enqueues on stream().
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>
#if __cplusplus >= 202002L
#include "dsp/PolyphaseResampler.h"
#endif

namespace quell::gpu {

class GpuResampler {
public:
    GpuResampler();
    ~GpuResampler();
    GpuResampler(const GpuResampler&) = delete;
    GpuResampler& operator=(const GpuResampler&) = delete;

    // Rates in Hz (48000, 44100, 16000, ...) and the prototype low-pass for L = out/gcd, M = in/gcd (as from
    // dsp::designResamplerPrototype; the C++20 overload below designs it). The kernels are C++17 and cannot
    // include the CPU header, hence the prototype is passed in.
    void prepare(int inputRate, int outputRate, const double* prototype, std::size_t prototypeLength, int channels,
                 std::size_t maxInput);
#if __cplusplus >= 202002L
    void prepare(int inputRate, int outputRate, int channels, std::size_t maxInput, const dsp::ResamplerDesign& design = {})
    {
        if (inputRate <= 0 || outputRate <= 0)
            throw std::invalid_argument("GpuResampler: sample rates must be positive (got " + std::to_string(inputRate)
                                        + " -> " + std::to_string(outputRate) + ")");
        const int g = std::gcd(inputRate, outputRate);
        if (outputRate / g > 4096 || inputRate / g > 4096)
            throw std::invalid_argument("GpuResampler: rate ratio too irregular (L or M above 4096)");
        const std::vector<double> h = dsp::designResamplerPrototype(outputRate / g, inputRate / g, design);
        prepare(inputRate, outputRate, h.data(), h.size(), channels, maxInput);
    }
#endif
    void reset();

    // How many outputs per channel the next call with `inputCount` inputs will produce (exact).
    std::size_t outputsFor(std::size_t inputCount) const;
    std::size_t maxOutput(std::size_t inputCount) const;

    // Device pointers: channel c input at in + c * inStride, output at out + c * outStride. Returns the
    // number of outputs written per channel (outputsFor(samples) before the call).
    std::size_t processDevice(const float* in, std::size_t inStride, std::size_t samples, float* out,
                              std::size_t outStride);
    // Host buffers: in packed planar (channels * samples); out planar with outStride >= outputsFor(samples).
    std::size_t process(const float* in, std::size_t samples, float* out, std::size_t outStride);
    void synchronize();

    void* stream() const;
    int upFactor() const;
    int downFactor() const;
    std::size_t tapsPerPhase() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace quell::gpu
