// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/WorkerPool.h"

#include <algorithm>

namespace quell::engine {

WorkerPool::WorkerPool(int threads, int realtimePriority)
{
    const int n = threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    workers_.reserve(static_cast<std::size_t>(n - 1));
    for (int i = 1; i < n; ++i)
        workers_.emplace_back([this, i, realtimePriority] {
            if (realtimePriority > 0) {
                const ThreadPriority got = raiseCurrentThreadPriority(realtimePriority);
                if (i == 1)
                    priority_.store(got);
            }
            work();
        });
}

WorkerPool::~WorkerPool()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_)
        t.join();
}

void WorkerPool::takeItems()
{
    for (std::size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_; i = next_.fetch_add(1, std::memory_order_relaxed)) {
        try {
            callItem(i);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!error_)
                error_ = std::current_exception();
        }
    }
}

void WorkerPool::work()
{
    std::size_t seen = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_)
                return;
            seen = generation_;
        }
        takeItems();
        std::lock_guard<std::mutex> lock(mutex_);
        if (--busy_ == 0)
            done_.notify_one();
    }
}

void WorkerPool::runErased(std::size_t count, ItemFunction function, void* context)
{
    if (count == 0)
        return;
    if (workers_.empty() || count == 1) {
        std::exception_ptr first;
        for (std::size_t i = 0; i < count; ++i) {
            try {
                function(context, i);
            } catch (...) {
                if (!first)
                    first = std::current_exception();
            }
        }
        if (first)
            std::rethrow_exception(first);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        function_ = function;
        context_ = context;
        count_ = count;
        next_.store(0, std::memory_order_relaxed);
        busy_ = static_cast<int>(workers_.size());
        error_ = nullptr;
        ++generation_;
    }
    wake_.notify_all();
    takeItems();
    std::exception_ptr error;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [&] { return busy_ == 0; });
        function_ = nullptr;
        context_ = nullptr;
        error = error_;
        error_ = nullptr;
    }
    if (error)
        std::rethrow_exception(error);
}

} // namespace quell::engine
