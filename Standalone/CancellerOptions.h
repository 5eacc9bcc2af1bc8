// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The echo canceller's command-line options, defined once for quell-render and quell-live: --taps,
// --lambda, --backend, --filter, --suppression, --no-comfort-noise, --distortion-model, with their ranges
// (EchoCancellerSettings.h) and their help.
#include <cstdio>
#include <string>

#include "aec/EchoCancellerSettings.h"
#include "io/CommandLine.h"

namespace quell::standalone {

// When `option` is one of the canceller's, reads its value (if it takes one) from args into settings and
// returns true; throws io::UsageError on a bad value. False for any other option.
bool parseCancellerOption(const std::string& option, io::Arguments& args, aec::EchoCancellerSettings& settings);

// Where the defaults differ: offline (quell-render: RLS on the CPU too) or real time (quell-live: the CPU
// filter that fits half a core).
enum class CancellerUse { Offline, Realtime };
// The options' help, two spaces in, the values at column 20.
void printCancellerOptions(std::FILE* f, CancellerUse use);

} // namespace quell::standalone
