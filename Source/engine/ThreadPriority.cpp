// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/ThreadPriority.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>

namespace quell::engine {

bool promoteCurrentThreadToRealtime(int priority) noexcept
{
    sched_param param{};
    param.sched_priority = std::clamp(priority, sched_get_priority_min(SCHED_FIFO), sched_get_priority_max(SCHED_FIFO));
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
}

} // namespace quell::engine
