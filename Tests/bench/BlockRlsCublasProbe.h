// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// cuBLAS doing the two passes over P that dominate a block of the block-exact GPU RLS (issue 17 asks
// the fused kernels to be measured against it): V = P U (the regressors' k columns through P, what
// blockrls::computeV does) and the rank-k update P = beta P + alpha Z V^T (what blockrls::startBlock
// does with the previous block's columns). Single precision, P of N x N (padded to the kernels' stride
// of 64), `streams` independent P in one strided-batched call. Plain C++ interface.
#include <cstddef>

namespace quell::gpu {

struct CublasBlockPasses {
    double productUs = 0.0;   // V = P U, per call (all streams)
    double updateUs = 0.0;    // P = beta P + alpha Z V^T, per call (all streams)
};

// Median of `repeats` timed calls (CUDA events) after a warm-up. Throws on a CUDA or cuBLAS error.
CublasBlockPasses measureCublasBlockPasses(int taps, int k, int streams, int repeats);

} // namespace quell::gpu
