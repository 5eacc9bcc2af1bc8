// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/ThreadPriority.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace quell::engine {

ThreadPriority raiseCurrentThreadPriority(int realtimePriority) noexcept
{
    sched_param param{};
    param.sched_priority = std::clamp(realtimePriority, sched_get_priority_min(SCHED_FIFO), sched_get_priority_max(SCHED_FIFO));
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0)
        return {true, 0};
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    for (int nice = -20; nice < 0; ++nice)
        if (::setpriority(PRIO_PROCESS, tid, nice) == 0)
            return {false, nice};
    return {};
}

std::string describe(const ThreadPriority& priority)
{
    if (priority.realtime)
        return "real-time";
    return priority.nice < 0 ? "nice " + std::to_string(priority.nice) : "normal";
}

} // namespace quell::engine
