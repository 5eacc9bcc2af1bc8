// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The echo canceller's command-line options, defined once for quell-render, quell-live and quell-eval:
// --taps, --lambda, --backend, --filter, --suppression, --no-comfort-noise, --distortion-model, with their
// ranges (EchoCancellerSettings.h) and their help.
#include "ProgramOptions.h"
#include "aec/EchoCancellerSettings.h"

namespace quell::standalone {

// Where the defaults differ: offline (quell-render: RLS on the CPU too) or real time (quell-live: the CPU
// filter that fits half a core).
enum class CancellerUse { Offline, Realtime };

// Adds the options, under the current group, each writing into `settings` (which must outlive the parse).
void addCancellerOptions(ProgramOptions& options, aec::EchoCancellerSettings& settings, CancellerUse use);

} // namespace quell::standalone
