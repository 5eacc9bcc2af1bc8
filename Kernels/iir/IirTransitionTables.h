// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Host-side precomputation of the correction matrices of the single-pass IIR scan (float64).
// T_L = A^L, where A is the one-step state transition of the filter under zero input: column c of T_L is
// the filter's response (its state after L samples) to a unit initial state e_c. These are the n-nacci-like
// correction factors of paper 004, in matrix form. Plain C++.
#include <cstdint>
#include <vector>

namespace quell::gpu::iir {

struct TransitionTables {
    std::vector<double> matrices;      // matrixCount(warps) matrices of D x D, layout of IirScanKernel.cuh
    std::uint64_t nonNegligible = 0;   // bit j: lane/warp matrix j has an entry above the threshold
    int lookbackCut = 33;              // look-back distances >= this are negligible (33: none are)
};

// a: the one-step transition (D x D, row-major). K samples per thread, `warps` warps per block.
// Entries below `negligible` (relative to the state's scale) count as zero: far below float rounding.
TransitionTables buildTransitionTables(const std::vector<double>& a, int d, int k, int warps,
                                       double negligible = 1e-10);

// T_{tile 2^k}, k = 0..count-1 (count matrices of D x D): the recursive-doubling steps of paper 000's fast
// look-ahead across tiles of `tile` samples.
std::vector<double> buildDoublingTables(const std::vector<double>& a, int d, long long tile, int count);

} // namespace quell::gpu::iir
