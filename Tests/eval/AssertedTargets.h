// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What quell-eval --assert checks for Quell on the CI corpus (quell-corpus --short --rir-ms 14, Quell at
// 256 taps: echo paths the filter covers): the targets of issue 7 and of the real-calls issue 12 that
// Quell meets there. The README says which other figures are printed and not asserted, and why.
#include <map>
#include <string>
#include <vector>

#include "eval/ComparisonTable.h"

namespace quell::eval {

// Checks one scenario. `results` holds every canceller's figures for it (Quell's named "quell"); `earlier`
// Quell's figures of the scenarios checked before it (a narrowband far end is compared with its full-band
// twin). Appends a line per missed target to `failures`.
void checkTargets(const std::string& scenario, const std::vector<ScenarioResult>& results, double alignedDelayMs,
                  double bulkDelayMs, long reinitialisations, const std::map<std::string, EchoFigures>& earlier,
                  std::vector<std::string>& failures);

} // namespace quell::eval
