// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Lock-free single-producer / single-consumer ring of floats. The producer and the consumer may be
// different threads (one each); neither ever waits, locks or allocates. Capacity is fixed at prepare.
// Beside DelayLine, the other container the layers share: the engine's block FIFOs, quell-live's far-end
// capture and StreamingWavWriter's hand-off to its writing thread.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <new>
#include <vector>

namespace quell::dsp {

class SpscRing {
public:
    // Not thread-safe: call before the producer and consumer start.
    void prepare(std::size_t capacity)
    {
        std::size_t c = 1;
        while (c < capacity + 1)
            c <<= 1;
        buffer_.assign(c, 0.0f);
        mask_ = c - 1;
        head_.store(0, std::memory_order_relaxed);
        tail_.store(0, std::memory_order_relaxed);
    }

    std::size_t capacity() const { return mask_; }

    // Producer side.
    std::size_t writeAvailable() const
    {
        const std::size_t head = head_.load(std::memory_order_relaxed);
        const std::size_t tail = tail_.load(std::memory_order_acquire);
        return mask_ - ((head - tail) & mask_);
    }
    // Writes all of `count` values or nothing; returns whether it wrote.
    bool write(const float* data, std::size_t count)
    {
        if (count > writeAvailable())
            return false;
        const std::size_t head = head_.load(std::memory_order_relaxed);
        for (std::size_t i = 0; i < count; ++i)
            buffer_[(head + i) & mask_] = data[i];
        head_.store((head + count) & mask_, std::memory_order_release);
        return true;
    }

    // Consumer side.
    std::size_t readAvailable() const
    {
        const std::size_t head = head_.load(std::memory_order_acquire);
        const std::size_t tail = tail_.load(std::memory_order_relaxed);
        return (head - tail) & mask_;
    }
    // Reads exactly `count` values (the caller checked readAvailable); data may be null to discard.
    void read(float* data, std::size_t count)
    {
        const std::size_t tail = tail_.load(std::memory_order_relaxed);
        if (data != nullptr)
            for (std::size_t i = 0; i < count; ++i)
                data[i] = buffer_[(tail + i) & mask_];
        tail_.store((tail + count) & mask_, std::memory_order_release);
    }

private:
    std::vector<float> buffer_;
    std::size_t mask_ = 0;
    // Separate cache lines: the producer and the consumer each write only their own index.
    alignas(64) std::atomic<std::size_t> head_{0};
    alignas(64) std::atomic<std::size_t> tail_{0};
};

} // namespace quell::dsp
