// SPDX-License-Identifier: GPL-3.0-or-later
// The default layout of the persistent RLS kernel per (taps, channels). Starting points chosen from the
// costs below and then checked by the benchmark sweep (numbers in NOTES.md):
//  - the per-sample exchange costs about the same whatever the number of blocks (16 to 128; NOTES.md),
//    so rows are spread thin (8 per block) up to one block per SM;
//  - P is best in registers (no shared-memory traffic: each element is read and written every sample),
//    then shared memory, then global memory (L2 or HBM);
//  - B channels in one launch: a channel gets several blocks (on chip) while B is small, one block
//    streaming P from HBM once B fills the device;
//  - where measured faster (N = 256 single, N = 256 and 512 batched), one thread-block cluster per
//    channel that exchanges through distributed shared memory instead of global memory.
#include "rls/RlsLaunchPolicy.h"

#include <algorithm>

#include "rls/RlsKernelParams.cuh"

namespace quell::gpu {
namespace {

int roundUp(int x, int m) { return (x + m - 1) / m * m; }
int ceilDiv(int a, int b) { return (a + b - 1) / b; }
int chunksFor(int quads, int threads)
{
    const int c = ceilDiv(quads, threads);
    return c <= 1 ? 1 : c <= 2 ? 2 : 4;
}

} // namespace

RlsLaunchPolicy chooseRlsPolicy(int taps, int channels, int multiprocessors, int sharedBytesPerBlock,
                                RlsLaunchPolicy r)
{
    const int quads = ceilDiv(taps, 4);
    if (r.threads <= 0 && r.columnChunks <= 0) {
        r.columnChunks = chunksFor(quads, 512);
        r.threads = roundUp(ceilDiv(quads, r.columnChunks), 32);
    } else if (r.threads <= 0) {
        r.threads = std::min(512, roundUp(ceilDiv(quads, r.columnChunks), 32));
    } else if (r.columnChunks <= 0) {
        r.columnChunks = chunksFor(quads, r.threads);
    }
    const int sms = std::max(1, multiprocessors);
    if (r.cluster < 0) {
        // Where measured faster (NOTES.md, run 4; quell-bench rls re-measures it): one 16-block cluster
        // per channel wins where its rows fit in registers or nearly (single channel N = 256, batched
        // N = 256 and 512 at every B measured). It loses at single-channel N = 512 and 1024: 32 or 64 rows
        // per block with only 128 or 256 threads make the shared-memory rows a serial latency chain. Tiny
        // filters (N <= 128) keep one block per channel, unmeasured sizes keep the grid layouts.
        const bool single = channels == 1;
        const bool measuredFaster = taps > 128 && (single ? taps <= 256 : taps <= 512);
        const bool layoutFree = r.rowsPerBlock <= 0; // a caller's rows were meant for the grid layouts
        r.cluster = measuredFaster && layoutFree ? 1 : 0;
    }
    r.cluster = r.cluster > 0 ? 1 : 0;

    if (r.rowsPerBlock <= 0 && r.cluster == 1) {
        // As thin as the cluster allows: all 16 blocks (rows of P are the work that scales with N).
        r.rowsPerBlock = std::min(roundUp(ceilDiv(taps, kRlsMaxClusterBlocks), 4), roundUp(taps, 4));
    } else if (r.rowsPerBlock <= 0) {
        if (channels == 1) {
            // Measured (NOTES.md, run 1): the exchange costs about the same for 16 or 128 blocks, so
            // spreading the rows thin wins; 8 rows per block at least, no more blocks than SMs, and a
            // tiny filter stays in one block (no grid exchange at all).
            r.rowsPerBlock = taps <= 128 ? roundUp(taps, 4) : roundUp(std::max(ceilDiv(taps, sms), 8), 4);
        } else {
            int perChannel = 1;
            while (channels * perChannel * 2 <= sms)
                perChannel *= 2;
            r.rowsPerBlock = roundUp(ceilDiv(taps, perChannel), 4);
        }
        r.rowsPerBlock = std::min(r.rowsPerBlock, roundUp(taps, 4));
    }
    const int groups = r.rowsPerBlock / 4;
    const int blocksPerChannel = ceilDiv(taps, r.rowsPerBlock);
    const bool streaming = channels > 1 && blocksPerChannel == 1;

    if (r.registerGroups < 0) {
        const int limit = std::min(groups, 4 / r.columnChunks);
        r.registerGroups = streaming ? 0 : limit >= 4 ? 4 : limit >= 2 ? 2 : limit >= 1 ? 1 : 0;
    }
    if (r.sharedGroups < 0) {
        const long long fixed =
            static_cast<long long>(rls::sharedBytes(r.threads, r.columnChunks, r.rowsPerBlock, 0, r.cluster == 1));
        const long long perGroup = 4LL * r.columnChunks * r.threads * 16;
        const long long reserve = 1024; // the kernel's static shared memory
        const long long fit = std::max(0LL, (sharedBytesPerBlock - reserve - fixed) / perGroup);
        r.sharedGroups = streaming ? 0 : static_cast<int>(std::min<long long>(fit, groups - r.registerGroups));
        r.sharedGroups = std::max(0, r.sharedGroups);
    }
    return r;
}

} // namespace quell::gpu
