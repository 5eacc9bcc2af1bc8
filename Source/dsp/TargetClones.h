// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// QUELL_CLONES marks a hot loop to be compiled twice: an AVX2 body beside the baseline x86-64 one, with
// an ifunc resolver that picks one at load time. The release binary then runs on machines without AVX2
// (CI, older hosts) and still uses AVX2 where it exists. FMA is deliberately left out: contraction
// changes rounding, which would break the exact symmetry of the RLS's P (p_ij and p_ji updated alike).
#define QUELL_CLONES __attribute__((target_clones("avx2", "default")))
