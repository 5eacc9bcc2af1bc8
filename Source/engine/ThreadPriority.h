// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Real-time scheduling for the engine's worker: where the system allows it (root, rtprio limits, or
// JACK/PipeWire's real-time group), the worker runs SCHED_FIFO just below the audio callback's usual
// priority, so a busy machine's other threads cannot delay a block past its deadline. Where it is not
// allowed, the worker stays a normal thread and the call says so; nothing else changes.
namespace quell::engine {

// Returns true when the calling thread now has real-time priority.
bool promoteCurrentThreadToRealtime(int priority = 60) noexcept;

} // namespace quell::engine
