// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// GPU FIR filtering, y[n] = sum_k h[k] x[n-k] (quell::dsp::Fir is the CPU twin). Host-side interface:
// plain C++ (C++17, the kernels' dialect; std::span conveniences for C++20 callers), no CUDA types.
//
// Two methods, chosen at prepare():
//  - direct: a shared-memory tile with its halo (paper 002), 16-byte vector reads from shared memory and
//    register blocking (paper 003's idea of aligned 4-wide arithmetic), for short filters;
//  - FFT: cuFFT overlap-save for long filters.
// Auto picks direct up to kDirectMaxTaps taps (the switch point measured by `quell-bench fir`).
//
// Channels: planar, channel c at [c * stride, c * stride + samples); one set of taps for all channels, a
// history of taps-1 inputs per channel carried across calls (streaming: block splits change nothing).
// Threading: one thread at a time per object; the object owns its device memory, cuFFT plans and stream.
// prepare() allocates; processDevice() enqueues on stream() and returns; process() copies through the
// device (its device output is NaN-filled first, so a sample left unwritten shows) and waits. The FFT
// method keeps one cuFFT plan per distinct frame count seen (created on first use). in and out must not
// overlap.
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <vector>
#if __cplusplus >= 202002L
#include <span>
#endif

namespace quell::gpu {

enum class FirMethod { Auto, Direct, Fft };

// The direct kernel's tuning, in one place (the defaults are what `quell-bench fir` measured fastest on
// the H100; tests and the benchmark set the others to compare and to cover every code path).
struct FirTuning {
    // Outputs per thread: 8 (256 threads) or 16 (128 threads); 0 picks 8 below 64 taps and 16 from 64.
    int directOutputsPerThread = 0;
    // 16-byte loads of the input window into shared memory where the input is 16-byte aligned (false:
    // scalar loads everywhere).
    bool vectorWindowLoads = true;
    // The direct kernel also writes the next call's history (false: a separate history kernel).
    bool fusedHistory = true;
};

class GpuFir {
public:
    // H100, 2^24 samples: direct 59.8 vs FFT 56.4 G samples/s at 384 taps, 46.3 vs 55.8 at 512 (direct falls
    // as 1/taps, FFT stays flat: even at about 400).
    static constexpr std::size_t kDirectMaxTaps = 400;

    GpuFir();
    ~GpuFir();
    GpuFir(const GpuFir&) = delete;
    GpuFir& operator=(const GpuFir&) = delete;

    // fftSize: 0 picks max(8192, 4 * nextpow2(taps)), 8 * nextpow2(taps) from 16384 taps (measured best on
    // the H100); otherwise a power of two above taps.
    void prepare(const float* taps, std::size_t tapCount, int channels, std::size_t maxSamples,
                 FirMethod method = FirMethod::Auto, std::size_t fftSize = 0);
    void reset();

    void processDevice(const float* in, float* out, std::size_t samples, std::size_t stride);
    void process(const float* in, float* out, std::size_t totalFloats); // packed planar host buffers
    void synchronize();

    void* stream() const;
    FirMethod method() const; // Direct or Fft, after Auto resolved
    std::size_t fftSize() const;
    std::size_t taps() const;
    int channels() const;
    // Tuning (benchmarks, tests), any time after prepare(); throws std::invalid_argument on an
    // unsupported value.
    void setTuning(const FirTuning& tuning);

#if __cplusplus >= 202002L
    void prepare(std::span<const float> taps, int channels, std::size_t maxSamples, FirMethod method = FirMethod::Auto,
                 std::size_t fftSize = 0)
    {
        prepare(taps.data(), taps.size(), channels, maxSamples, method, fftSize);
    }
    void process(std::span<const float> in, std::span<float> out)
    {
        if (out.size() < in.size())
            throw std::invalid_argument("GpuFir::process: output shorter than input");
        process(in.data(), out.data(), in.size());
    }
#endif

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace quell::gpu
