// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The grid-wide (or channel-wide) barrier of the persistent RLS kernel: a monotonically increasing
// arrival counter in global memory, zeroed before each launch. Barrier number b (1, 2, ...) of a group
// of `blocks` blocks waits until the counter reaches b * blocks. One thread per block arrives with a
// release add and spins with acquire loads; __syncthreads on both sides extends the ordering to the
// whole block (PTX release/acquire are cumulative over the bar.sync).
//
// Why not cooperative_groups::this_grid().sync(): it is a general sense-reversing barrier that resets
// its state every time; the counter here needs one atomic and one poll loop per block, and the
// benchmark measures both (RlsBarrierProbe).
#include <cuda/atomic>

namespace quell::gpu::rls {

__device__ __forceinline__ void groupBarrier(unsigned int* counter, unsigned int target)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> arrivals(*counter);
        arrivals.fetch_add(1u, cuda::memory_order_release);
        while (arrivals.load(cuda::memory_order_acquire) < target) {
        }
    }
    __syncthreads();
}

} // namespace quell::gpu::rls
