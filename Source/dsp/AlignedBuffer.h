// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A fixed-size, zero-initialised, 64-byte-aligned array: rows of P start on cache lines so the
// vectorised RLS loops never split a load.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace quell::dsp {

template <typename T>
class AlignedBuffer {
public:
    AlignedBuffer() = default;
    explicit AlignedBuffer(std::size_t count) { resize(count); }

    void resize(std::size_t count)
    {
        const std::size_t bytes = ((count * sizeof(T) + 63) / 64) * 64;
        T* raw = static_cast<T*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
        if (raw == nullptr)
            throw std::bad_alloc();
        data_.reset(raw);
        size_ = count;
        zero();
    }
    void zero() { std::fill(data_.get(), data_.get() + size_, T(0)); }

    T* data() { return data_.get(); }
    const T* data() const { return data_.get(); }
    std::size_t size() const { return size_; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }

private:
    struct Free {
        void operator()(T* p) const { std::free(p); }
    };
    std::unique_ptr<T[], Free> data_;
    std::size_t size_ = 0;
};

} // namespace quell::dsp
