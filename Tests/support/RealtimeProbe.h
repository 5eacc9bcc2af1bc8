// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Counts heap allocations and mutex locks made by the current thread while a probe is armed. The test
// program replaces the global operator new/delete and interposes pthread_mutex_lock to do the counting
// (RealtimeProbe.cpp), so anything the engine's audio path calls - the standard library included - is
// seen.
#include <cstdint>

namespace quell::test {

struct RealtimeViolations {
    std::uint64_t allocations = 0;
    std::uint64_t locks = 0;
};

class RealtimeProbe {
public:
    RealtimeProbe();   // arms counting on this thread
    ~RealtimeProbe();  // disarms
    RealtimeProbe(const RealtimeProbe&) = delete;
    RealtimeProbe& operator=(const RealtimeProbe&) = delete;
};

RealtimeViolations realtimeViolations();   // this thread's totals
void resetRealtimeViolations();

} // namespace quell::test
