// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Lock-free distribution of durations: one writer (the worker) adds, any thread reads percentiles.
// Log-spaced bins from 1 us to 10 s, 48 per decade (bin width 4.9%): percentiles are reported as the
// upper edge of their bin, the maximum exactly.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>

namespace quell::engine {

struct TimingSummary {
    std::uint64_t count = 0;
    double medianUs = 0.0, p99Us = 0.0, p999Us = 0.0, maxUs = 0.0, meanUs = 0.0;
};

class TimingHistogram {
public:
    static constexpr int kPerDecade = 48;
    static constexpr int kBins = 7 * kPerDecade + 1; // 1 us .. 10 s, plus overflow

    void reset()
    {
        for (auto& b : bins_) b.store(0, std::memory_order_relaxed);
        count_.store(0, std::memory_order_relaxed);
        sumNs_.store(0, std::memory_order_relaxed);
        maxNs_.store(0, std::memory_order_relaxed);
    }

    void add(std::int64_t nanoseconds)
    {
        const double us = static_cast<double>(nanoseconds) * 1e-3;
        int bin = us <= 1.0 ? 0 : static_cast<int>(std::ceil(std::log10(us) * kPerDecade));
        bin = std::min(bin, kBins - 1);
        bins_[static_cast<std::size_t>(bin)].fetch_add(1, std::memory_order_relaxed);
        count_.fetch_add(1, std::memory_order_relaxed);
        sumNs_.fetch_add(static_cast<std::uint64_t>(nanoseconds), std::memory_order_relaxed);
        if (static_cast<std::uint64_t>(nanoseconds) > maxNs_.load(std::memory_order_relaxed))
            maxNs_.store(static_cast<std::uint64_t>(nanoseconds), std::memory_order_relaxed);
    }

    TimingSummary summary() const
    {
        TimingSummary s;
        std::array<std::uint64_t, kBins> counts{};
        for (int i = 0; i < kBins; ++i) {
            counts[static_cast<std::size_t>(i)] = bins_[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
            s.count += counts[static_cast<std::size_t>(i)];
        }
        if (s.count == 0)
            return s;
        s.maxUs = static_cast<double>(maxNs_.load(std::memory_order_relaxed)) * 1e-3;
        s.meanUs = static_cast<double>(sumNs_.load(std::memory_order_relaxed)) * 1e-3 / static_cast<double>(count_.load(std::memory_order_relaxed));
        auto percentile = [&](double q) {
            const double target = q * static_cast<double>(s.count);
            std::uint64_t seen = 0;
            for (int i = 0; i < kBins; ++i) {
                seen += counts[static_cast<std::size_t>(i)];
                if (static_cast<double>(seen) >= target)
                    return std::min(std::pow(10.0, static_cast<double>(i) / kPerDecade), s.maxUs);
            }
            return s.maxUs;
        };
        s.medianUs = percentile(0.5);
        s.p99Us = percentile(0.99);
        s.p999Us = percentile(0.999);
        return s;
    }

private:
    std::array<std::atomic<std::uint64_t>, kBins> bins_{};
    std::atomic<std::uint64_t> count_{0}, sumNs_{0}, maxNs_{0};
};

} // namespace quell::engine
