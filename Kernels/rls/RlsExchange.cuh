// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How the blocks of one channel of the persistent RLS kernel hand values to each other once per sample.
//  - Grid variant: every value is published as a 64-bit word {value, tag = sample number + 1} with one
//    relaxed store, so a reader that sees the tag it expects also sees the value (single-copy atomicity
//    of 64-bit accesses); readers poll exactly the words they need.
//  - Cluster variant (sm_90 on): values stay in the owner's shared memory and are read through
//    distributed shared memory after the hardware cluster barrier.
#include <cuda_runtime.h>

#include <cooperative_groups.h>

#include <cuda/atomic>

namespace quell::gpu::rls {

__device__ __forceinline__ void publish(unsigned long long* word, float value, unsigned int tag)
{
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*word).store(
        (static_cast<unsigned long long>(tag) << 32) | __float_as_uint(value), cuda::memory_order_relaxed);
}

__device__ __forceinline__ unsigned long long loadWord(unsigned long long* word)
{
    return cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*word).load(cuda::memory_order_relaxed);
}

// Collects M published words: all loads are issued first (one round trip, not M), then each word that
// does not carry `tag` yet is polled again, with a short sleep so spinning threads do not crowd the L2
// slices the late publishers are writing to. Entries with active[i] false read as 0.
template <int M>
__device__ __forceinline__ void collectWords(unsigned long long* const (&words)[M], const bool (&active)[M],
                                             unsigned int tag, float (&values)[M])
{
    unsigned long long x[M];
#pragma unroll
    for (int i = 0; i < M; ++i)
        x[i] = active[i] ? loadWord(words[i]) : (static_cast<unsigned long long>(tag) << 32);
#pragma unroll
    for (int i = 0; i < M; ++i) {
        while (static_cast<unsigned int>(x[i] >> 32) != tag) {
            __nanosleep(32);
            x[i] = loadWord(words[i]);
        }
        values[i] = __uint_as_float(static_cast<unsigned int>(x[i]));
    }
}

// The value of a word whose tag is known to be current (published by a launch that has completed).
__device__ __forceinline__ float valueOf(const unsigned long long* word)
{
    return __uint_as_float(static_cast<unsigned int>(*word));
}

// Thread-block clusters exist from sm_90 on. The kernel is also compiled for older targets (the default
// architecture list holds 80), where the cluster variant is never launched: prepare() chooses it only on
// devices that report cluster launch support. These wrappers keep that instantiation compilable.
__device__ __forceinline__ void clusterSync()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().sync();
#else
    __trap();
#endif
}

__device__ __forceinline__ const float* clusterSharedOf(const float* local, unsigned int rank)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().map_shared_rank(local, rank);
#else
    (void)rank;
    __trap();
    return local;
#endif
}

} // namespace quell::gpu::rls
