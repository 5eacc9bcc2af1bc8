// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Physical floors the RLS benchmark compares against, measured on the device in the same run.
//
// The grid-barrier floor: time per iteration of a persistent kernel that does nothing but the grid-wide
// barrier, with the same grid as the RLS kernel. The RLS kernel makes one such barrier per sample, so
// this is the floor of its time per sample (plain C++, no CUDA types).
#include <cstddef>

namespace quell::gpu {

enum class GridBarrierKind {
    GenerationCounter,   // the hand-written barrier the RLS kernel uses (atomics, acquire/release)
    CooperativeGroups,   // cooperative_groups::this_grid().sync(), for comparison
};

// Microseconds per barrier, averaged over `iterations` in one launch (after a warm-up launch).
double measureGridBarrierMicroseconds(int blocks, int threads, int iterations, GridBarrierKind kind);

// Device-to-device copy bandwidth in GB/s, counting bytes read plus bytes written (2 * bytes per copy),
// the same way the RLS bandwidth bound counts P read and written. `bytes` per copy, best of `repeats`.
double measureCopyBandwidthGBps(std::size_t bytes, int repeats);

// The device's FP32 peak in TFLOP/s from its description: multiprocessors x 128 FP32 lanes (sm_80 and
// later) x 2 (a fused multiply-add) x the maximum SM clock.
double fp32PeakTflops();

} // namespace quell::gpu
