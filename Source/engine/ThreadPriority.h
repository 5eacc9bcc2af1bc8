// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Real-time scheduling for the engine's worker: where the system allows it (root, rtprio limits, or
// JACK/PipeWire's real-time group), the worker runs SCHED_FIFO just below the audio callback's usual
// priority, so a busy machine's other threads cannot delay a block past its deadline. Where it is not
// allowed, the worker stays a normal thread and the call says so; nothing else changes.
//
// Where real-time scheduling is refused, a higher nice priority may still be granted (CAP_SYS_NICE, or
// an RLIMIT_NICE such as audio groups get): with every core busy, quell-bench engine on an H100 host whose
// container granted neither saw the normal-priority worker wait up to 8.9 ms for a core (1982 of 22500
// 128-frame blocks late, with a safety block), so the engine asks for the highest nice it may have.
namespace quell::engine {

// Returns true when the calling thread now has real-time priority.
bool promoteCurrentThreadToRealtime(int priority = 60) noexcept;

// Lowers the calling thread's nice value (Linux: per thread) to the lowest of -20..-1 the system allows;
// returns the value it now has (0: not raised).
int raiseCurrentThreadNice() noexcept;

} // namespace quell::engine
