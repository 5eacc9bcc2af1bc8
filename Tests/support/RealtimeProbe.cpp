// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/RealtimeProbe.h"

#include <dlfcn.h>
#include <pthread.h>

#include <cstdlib>
#include <new>

namespace quell::test {
namespace {
thread_local bool armed = false;
thread_local RealtimeViolations counts{};
} // namespace

RealtimeProbe::RealtimeProbe() { armed = true; }
RealtimeProbe::~RealtimeProbe() { armed = false; }
RealtimeViolations realtimeViolations() { return counts; }
void resetRealtimeViolations() { counts = {}; }

namespace detail {
inline void noteAllocation()
{
    if (armed) ++counts.allocations;
}
inline void noteLock()
{
    if (armed) ++counts.locks;
}
} // namespace detail

} // namespace quell::test

// --- global replacements (this test program only) ---

void* operator new(std::size_t size)
{
    quell::test::detail::noteAllocation();
    if (void* p = std::malloc(size == 0 ? 1 : size))
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, std::align_val_t align)
{
    quell::test::detail::noteAllocation();
    const std::size_t a = static_cast<std::size_t>(align);
    if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a))
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) { return operator new(size, align); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

extern "C" int pthread_mutex_lock(pthread_mutex_t* m)
{
    using Fn = int (*)(pthread_mutex_t*);
    static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_mutex_lock"));
    quell::test::detail::noteLock();
    return real(m);
}
