// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A fixed set of threads that run one job's items together and return when all are done (fork-join):
// the many-streams canceller's per-stream halves, every block. The caller's thread takes items too, so a
// pool of one thread is the caller alone.
//
// The threads sleep between jobs. Spinning for the next job instead (2 ms, pausing between looks) made
// the many-streams benchmark's calls 4 to 7 times slower on this project's 2-core virtual machine (4
// streams at 512 taps: 0.4-0.5 ms a call at the median sleeping, 2.5-3.7 ms spinning), where the spin
// spent the machine's CPU time that the streams needed; not kept.
//
// Threading: run() from one thread at a time; the pool's threads are made in the constructor and joined
// in the destructor. run() allocates nothing; it wakes the threads through a mutex and condition
// variable (a server's worker, not an audio callback: it may block).
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <type_traits>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/ThreadPriority.h"

namespace quell::engine {

class WorkerPool {
public:
    // threads: the threads that take items, the caller's included (1: no extra thread); 0 = the
    // hardware's threads. realtimePriority > 0: each of the pool's threads asks for it
    // (raiseCurrentThreadPriority: SCHED_FIFO where allowed, else the highest nice), so that a busy host
    // does not hold a job's items back; 0 leaves them normal threads.
    explicit WorkerPool(int threads = 0, int realtimePriority = 0);
    // What the pool's threads got (the first thread's; all ask alike). Normal for a pool of one.
    ThreadPriority priority() const { return priority_.load(); }
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    int threads() const { return static_cast<int>(workers_.size()) + 1; }
    // item(i) for every i in [0, count), spread over the threads; returns when all have returned. The
    // first exception an item throws is rethrown here (the other items still run). item is called through
    // a pointer to it (no std::function: no allocation however much the caller's lambda captures).
    template <typename Item>
    void run(std::size_t count, Item&& item)
    {
        using Callable = std::remove_reference_t<Item>;
        runErased(count, [](void* context, std::size_t i) { (*static_cast<Callable*>(context))(i); },
                  const_cast<void*>(static_cast<const void*>(&item)));
    }

private:
    using ItemFunction = void (*)(void* context, std::size_t i);
    void runErased(std::size_t count, ItemFunction function, void* context);
    void work();
    void takeItems();
    void callItem(std::size_t i) { function_(context_, i); }

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    ItemFunction function_ = nullptr;   // the job under way (set under mutex_ before its generation)
    void* context_ = nullptr;
    std::size_t count_ = 0;
    std::atomic<std::size_t> next_{0};
    std::size_t generation_ = 0;   // a new job for the threads (guarded by mutex_)
    int busy_ = 0;                 // threads still in the job (guarded by mutex_)
    bool stopping_ = false;
    std::exception_ptr error_;
    std::atomic<ThreadPriority> priority_{ThreadPriority{}};
};

} // namespace quell::engine
