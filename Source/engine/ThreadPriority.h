// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Real-time scheduling for the engine's worker: where the system allows it (root, rtprio limits, or
// JACK/PipeWire's real-time group), the worker runs SCHED_FIFO just below the audio callback's usual
// priority, so a busy machine's other threads cannot delay a block past its deadline.
//
// Where real-time scheduling is refused, a higher nice priority may still be granted (CAP_SYS_NICE, or
// an RLIMIT_NICE such as audio groups get): with every core busy, quell-bench engine on an H100 host whose
// container granted neither saw the normal-priority worker wait up to 8.9 ms for a core (1982 of 22500
// 128-frame blocks late, with a safety block), so the thread then asks for the highest nice it may have.
// Where neither is allowed it stays a normal thread, and the result says so; nothing else changes.
#include <string>

namespace quell::engine {

// What a thread got.
struct ThreadPriority {
    bool realtime = false;   // SCHED_FIFO
    int nice = 0;            // otherwise its nice value (0: a normal thread)
};

// Real-time scheduling at `realtimePriority` (clamped to SCHED_FIFO's range), else the lowest nice value
// of -20..-1 the system allows (Linux: per thread), for the calling thread.
ThreadPriority raiseCurrentThreadPriority(int realtimePriority = 60) noexcept;

// "real-time", "nice -20" or "normal".
std::string describe(const ThreadPriority& priority);

} // namespace quell::engine
