// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Chooses the kernel's arithmetic for IirArithmetic::Auto. Poles near z = 1 (a 20 Hz high-pass at 48 kHz,
// say) make float32 recurrences lose accuracy: the feed-forward part nearly cancels the feedback's large
// low-frequency gain, which amplifies every rounding error. Rather than guess from pole radii, run the
// kernel's float32 arithmetic (same operation order) and float64 on the host over a test signal with strong
// low-frequency content and measure the loss. Plain C++.
#include <vector>

namespace quell::gpu::iir {

// Relative L2 error of float32 against float64 filtering of the test signal.
// Direct form: c = b[0..M], a[1..M] (kernel layout, 2M+1 values). Cascade: 5 values per section.
double float32LossDirect(const std::vector<double>& c, int order);
double float32LossCascade(const std::vector<double>& c, int sections);

} // namespace quell::gpu::iir
