// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// GPU IIR filtering over long signals in one pass over memory (papers 004 and 000). Host-side interface:
// plain C++, no CUDA types.
//
// Two filter shapes, both with their CPU twin in Source/dsp:
//  - direct form of order M (quell::dsp::DirectFormIir convention: y[n] = sum b[k] x[n-k] + sum a[j] y[n-j],
//    PLUS sign on the feedback, a[0] ignored), orders 1..8;
//  - cascades of second-order sections (quell::dsp::BiquadCascade / SciPy "sos" convention, minus sign on
//    a1, a2), 1..4 sections, the whole cascade in the same pass.
// Coefficients are rounded to float32 once, at prepare().
//
// Channels: planar buffers, channel c at [c * stride, c * stride + samples). Each channel has its own state
// and a coefficient set (one set shared by all channels, or one set per channel).
// Streaming: the state (last inputs and outputs) is carried across calls, so cutting a signal into blocks
// changes nothing beyond float rounding; initial conditions can be set (direct form).
//
// Threading: one thread at a time per object; the object owns its device memory and stream. prepare()
// allocates; processDevice() enqueues work on the object's stream and returns (no host synchronisation);
// process() copies host data through the device (its device output is NaN-filled first, so a sample left
// unwritten shows) and waits. Input and output must not overlap.
// The kernels are compiled as C++17 (no std::span there): the core API takes pointers and sizes, and the
// std::span / dsp::Biquad conveniences below exist for C++20 callers only.
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <vector>
#if __cplusplus >= 202002L
#include <span>

#include "dsp/BiquadCascade.h"
#endif

namespace quell::gpu {

// Arithmetic inside the kernel: data in and out are always float32. Auto: float32 unless a host probe at
// prepare() shows float32 losing accuracy for these coefficients (poles near z = 1, e.g. a 20 Hz high-pass
// at 48 kHz), then float64 (slower: see Kernels/iir/NOTES.md).
enum class IirArithmetic { Auto, Float32, Float64 };

// One biquad, dsp::Biquad's convention (SciPy sos: a0 = 1, minus sign on a1, a2).
struct BiquadCoefficients {
    double b0, b1, b2, a1, a2;
};

// How tiles map to the device (Kernels/iir/NOTES.md has the measurements):
//  - OneTilePerBlock: single-pass scan (paper 004), a tile of a few thousand samples per thread block;
//  - Persistent: the blocks the device holds at once claim tiles in order and prefetch the next one;
//  - WarpPerTile: single-pass scan with a tile per warp, 16-byte vector loads and stores, no block barriers;
//  - MultiBlock: paper 000's three passes (particular solutions, fast look-ahead, complete solutions);
//    reads the input twice.
// Auto runs the one measured fastest on the H100.
enum class IirSchedule { Auto = 0, OneTilePerBlock = 1, Persistent = 2, WarpPerTile = 3, MultiBlock = 4 };

// The warp-per-tile kernel's tuning, in one place (defaults: measured fastest on the H100, see
// Kernels/iir/NOTES.md; the benchmark's sweep sets the others). Read at prepare(): the correction tables
// are built for the tile shape.
struct IirTuning {
    // float32 direct state sizes 1 and 2: 0 = 32 samples per lane x 4 sub-tiles (4096-sample warp tiles),
    // 1 = 16 x 4.
    int longRunShape = 0;
    // Stores each sub-tile's outputs as soon as they are final (float32 direct state sizes up to 4, the
    // kernels compiled with the option); -1 = where measured faster (those same kernels), 0 = off.
    int earlyStores = -1;
};

struct DirectFormCoefficients {
    std::vector<double> b; // b[0..M]
    std::vector<double> a; // a[0..M], a[0] ignored, plus sign on feedback
};

class GpuIir {
public:
    GpuIir();
    ~GpuIir();
    GpuIir(const GpuIir&) = delete;
    GpuIir& operator=(const GpuIir&) = delete;

    // sets.size() == 1: shared by all channels; otherwise one set per channel. All sets are padded to the
    // largest order. Throws std::invalid_argument on bad settings (order above 8, no coefficients, ...).
    // maxSamples: the longest call per channel without internal splitting (longer calls are split).
    void prepareDirect(const DirectFormCoefficients* sets, std::size_t setCount, int channels,
                       std::size_t maxSamples, IirArithmetic arithmetic = IirArithmetic::Auto);
    // One cascade per set (each set 1..4 sections; shorter cascades are padded with pass-through sections).
    void prepareCascade(const std::vector<BiquadCoefficients>* sets, std::size_t setCount, int channels,
                        std::size_t maxSamples, IirArithmetic arithmetic = IirArithmetic::Auto);

    // Zero state on every channel.
    void reset();
    // Direct form only: pastInputs[j] = x[-1-j], pastOutputs[j] = y[-1-j], j < order (as DirectFormIir).
    void setState(int channel, const float* pastInputs, const float* pastOutputs, std::size_t count);

    // Device pointers (float32, planar with `stride` floats between channels). Enqueued on stream().
    void processDevice(const float* in, float* out, std::size_t samples, std::size_t stride);
    // Host data, planar and packed: channel c at [c * samples, (c + 1) * samples). Waits for the result.
    void process(const float* in, float* out, std::size_t totalFloats);
    void synchronize();

#if __cplusplus >= 202002L
    void prepareDirect(std::span<const DirectFormCoefficients> sets, int channels, std::size_t maxSamples,
                       IirArithmetic arithmetic = IirArithmetic::Auto)
    {
        prepareDirect(sets.data(), sets.size(), channels, maxSamples, arithmetic);
    }
    void prepareCascade(std::span<const std::vector<dsp::Biquad>> sets, int channels, std::size_t maxSamples,
                        IirArithmetic arithmetic = IirArithmetic::Auto)
    {
        std::vector<std::vector<BiquadCoefficients>> converted;
        for (const auto& set : sets) {
            auto& c = converted.emplace_back();
            for (const dsp::Biquad& q : set)
                c.push_back({q.b0, q.b1, q.b2, q.a1, q.a2});
        }
        prepareCascade(converted.data(), converted.size(), channels, maxSamples, arithmetic);
    }
    void setState(int channel, std::span<const float> pastInputs, std::span<const float> pastOutputs)
    {
        if (pastInputs.size() != pastOutputs.size())
            throw std::invalid_argument("GpuIir::setState: as many past inputs as past outputs");
        setState(channel, pastInputs.data(), pastOutputs.data(), pastInputs.size());
    }
    void process(std::span<const float> in, std::span<float> out)
    {
        if (out.size() < in.size())
            throw std::invalid_argument("GpuIir::process: output shorter than input");
        process(in.data(), out.data(), in.size());
    }
#endif

    void* stream() const; // the cudaStream_t the work is enqueued on
    int order() const;    // M for the direct form, 2 * sections for a cascade
    int channels() const;
    const char* variant() const; // e.g. "plr-warp-direct-M4-f32" for reports
    // Tuning (benchmarks, tests): how tiles map to the device. Call after prepare().
    void setSchedule(IirSchedule schedule);
    // The warp kernel's shape and options for the next prepare(); throws std::invalid_argument on a value
    // out of range.
    void setTuning(const IirTuning& tuning);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace quell::gpu
