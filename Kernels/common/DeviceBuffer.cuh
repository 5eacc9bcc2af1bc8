// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// RAII owners for device memory, pinned host memory, streams and events. Move-only.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "common/CudaCheck.cuh"

namespace quell::gpu {

template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) { allocate(count); }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept
    {
        if (this != &o) {
            release();
            ptr_ = std::exchange(o.ptr_, nullptr);
            count_ = std::exchange(o.count_, 0);
        }
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void allocate(std::size_t count)
    {
        release();
        if (count > 0)
            QUELL_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
        count_ = count;
    }
    void release()
    {
        if (ptr_ != nullptr)
            cudaFree(ptr_); // no throw from a destructor path; a failed free is unrecoverable anyway
        ptr_ = nullptr;
        count_ = 0;
    }
    T* get() const { return ptr_; }
    std::size_t size() const { return count_; }
    std::size_t bytes() const { return count_ * sizeof(T); }

private:
    T* ptr_ = nullptr;
    std::size_t count_ = 0;
};

template <typename T>
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t count) { allocate(count); }
    ~PinnedBuffer() { release(); }
    PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept
    {
        if (this != &o) {
            release();
            ptr_ = std::exchange(o.ptr_, nullptr);
            count_ = std::exchange(o.count_, 0);
        }
        return *this;
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;

    void allocate(std::size_t count)
    {
        release();
        if (count > 0)
            QUELL_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
        count_ = count;
    }
    void release()
    {
        if (ptr_ != nullptr)
            cudaFreeHost(ptr_);
        ptr_ = nullptr;
        count_ = 0;
    }
    T* get() const { return ptr_; }
    std::size_t size() const { return count_; }

private:
    T* ptr_ = nullptr;
    std::size_t count_ = 0;
};

class Stream {
public:
    Stream() { QUELL_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
    // The device's highest priority: where another process or stream shares the GPU, the real-time
    // path's pending blocks are scheduled first (running blocks are not preempted).
    struct Highest {};
    explicit Stream(Highest)
    {
        int least = 0, greatest = 0;
        QUELL_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        QUELL_CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, greatest));
    }
    ~Stream() { if (s_ != nullptr) cudaStreamDestroy(s_); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaStream_t get() const { return s_; }
    void synchronize() const { QUELL_CUDA_CHECK(cudaStreamSynchronize(s_)); }

private:
    cudaStream_t s_ = nullptr;
};

class Event {
public:
    Event() { QUELL_CUDA_CHECK(cudaEventCreate(&e_)); }
    ~Event() { if (e_ != nullptr) cudaEventDestroy(e_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    cudaEvent_t get() const { return e_; }
    void record(cudaStream_t s) { QUELL_CUDA_CHECK(cudaEventRecord(e_, s)); }
    // Milliseconds from `start` to this event (both recorded, this one completed).
    float since(const Event& start) const
    {
        QUELL_CUDA_CHECK(cudaEventSynchronize(e_));
        float ms = 0.0f;
        QUELL_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
        return ms;
    }

private:
    cudaEvent_t e_ = nullptr;
};

} // namespace quell::gpu
