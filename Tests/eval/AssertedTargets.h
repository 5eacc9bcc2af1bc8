#pragma once
// What quell-eval --assert checks for Quell on the short corpus (quell-corpus --short): the targets of
// issue 7 that Quell meets there. The others are printed in the table, not asserted (README says which).
#include <string>
#include <vector>

#include "eval/EchoMetrics.h"

namespace quell::eval {

// Appends a line per missed target to `failures`.
void checkTargets(const std::string& scenario, const EchoFigures& f, std::vector<std::string>& failures);

} // namespace quell::eval
