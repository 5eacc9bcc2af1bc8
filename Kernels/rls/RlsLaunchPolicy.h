// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How the persistent RLS kernel lays one channel's P over the device (plain C++, no CUDA types).
//
// A channel's N rows of P are cut into `blocksPerChannel` slices of `rowsPerBlock` rows (a multiple of
// 4: rows are processed in groups of 4, one warp-level reduction per group). Each block keeps its first
// `registerGroups` groups in registers, the next `sharedGroups` in shared memory, and streams the rest
// from global memory (L2/HBM). Columns are spread over the block's threads, 4 contiguous columns per
// float4 and `columnChunks` float4 per thread, so N <= 4 * threads * columnChunks.
//
// All the numbers that decide speed live here, in one place, and are chosen per N by measurement
// (Kernels/rls/README.md, NOTES.md); the benchmark can override them to sweep alternatives.
namespace quell::gpu {

struct RlsLaunchPolicy {
    int threads = 0;          // per block, multiple of 32, at most 512; 0 = choose
    int columnChunks = 0;     // float4 column chunks per thread (1, 2 or 4); 0 = choose
    int rowsPerBlock = 0;     // multiple of 4; 0 = choose
    int registerGroups = -1;  // groups of 4 rows held in registers (0, 1, 2 or 4, with
                              // registerGroups * columnChunks <= 4); -1 = choose
    int sharedGroups = -1;    // groups of 4 rows held in shared memory; -1 = as many as fit
    // Meet at an atomic-counter barrier before collecting the published words. Measured faster at every
    // N (NOTES.md, run 3): polling the words alone has tens of thousands of spinning threads crowd the
    // L2. On by default; off only to compare.
    bool counterBarrier = true;
    // 1: the channel's blocks form ONE thread-block cluster (at most 16 blocks, so for N <= 1024 with
    // P on chip) and exchange v and the partial sums through distributed shared memory with one
    // hardware cluster barrier per sample instead of the global-memory exchange (counterBarrier is then
    // ignored). 0: the grid exchange. -1: choose (the cluster where it was measured faster, NOTES.md).
    int cluster = -1;
};

// The most blocks of one cluster (non-portable size, Hopper).
constexpr int kRlsMaxClusterBlocks = 16;

// The policy the library picks for `taps` and `channels` on a device with `multiprocessors` SMs and
// `sharedBytesPerBlock` of opt-in shared memory. Fields already set in `request` are kept.
RlsLaunchPolicy chooseRlsPolicy(int taps, int channels, int multiprocessors, int sharedBytesPerBlock,
                                RlsLaunchPolicy request = {});

} // namespace quell::gpu
