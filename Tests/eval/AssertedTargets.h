#pragma once
// What quell-eval --assert checks for Quell on the CI corpus (quell-corpus --short --rir-ms 14, Quell at
// 256 taps: echo paths the filter covers, issue 7's "linear room echo"): the targets of issue 7 that Quell
// meets there. The others are printed in the table, not asserted (the README says which and why).
#include <string>
#include <vector>

#include "eval/EchoMetrics.h"

namespace quell::eval {

// Appends a line per missed target to `failures`.
void checkTargets(const std::string& scenario, const EchoFigures& f, double alignedDelayMs, double bulkDelayMs,
                  std::vector<std::string>& failures);

} // namespace quell::eval
