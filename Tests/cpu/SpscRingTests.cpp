// SPDX-License-Identifier: GPL-3.0-or-later
// The lock-free ring: all-or-nothing writes, order across the wrap, and one producer with one consumer
// on two threads losing or reordering nothing.
#include <catch2/catch.hpp>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "dsp/SpscRing.h"

using quell::dsp::SpscRing;

TEST_CASE("SpscRing: capacity, all-or-nothing writes and order across the wrap", "[dsp][ring]")
{
    SpscRing ring;
    ring.prepare(5);
    CHECK(ring.capacity() == 7);   // the next power of two less one slot
    CHECK(ring.readAvailable() == 0);
    CHECK(ring.writeAvailable() == 7);
    const float a[] = {1, 2, 3, 4, 5};
    CHECK(ring.write(a, 5));
    CHECK_FALSE(ring.write(a, 3));   // 2 free: nothing is written
    CHECK(ring.readAvailable() == 5);
    float got[8] = {};
    ring.read(got, 4);
    CHECK(got[0] == 1.0f);
    CHECK(got[3] == 4.0f);
    const float b[] = {6, 7, 8, 9, 10, 11};
    CHECK(ring.write(b, 6));   // wraps
    CHECK(ring.writeAvailable() == 0);
    ring.read(got, 7);
    for (int i = 0; i < 7; ++i)
        CHECK(got[i] == static_cast<float>(5 + i));
    CHECK(ring.readAvailable() == 0);
    CHECK(ring.write(a, 2));
    ring.read(nullptr, 2);   // discard
    CHECK(ring.readAvailable() == 0);
}

TEST_CASE("SpscRing: a producer and a consumer thread pass 2 million values in order", "[dsp][ring]")
{
    SpscRing ring;
    ring.prepare(1000);
    constexpr int total = 2'000'000;
    std::thread producer([&] {
        std::mt19937 rng(1);
        std::vector<float> chunk(300);
        int next = 0;
        while (next < total) {
            const int n = std::min<int>(1 + static_cast<int>(rng() % 300), total - next);
            for (int i = 0; i < n; ++i)
                chunk[static_cast<std::size_t>(i)] = static_cast<float>((next + i) % 1000000);
            while (!ring.write(chunk.data(), static_cast<std::size_t>(n)))
                std::this_thread::yield();
            next += n;
        }
    });
    int expected = 0, mismatches = 0;
    std::vector<float> chunk(500);
    std::mt19937 rng(2);
    while (expected < total) {
        const std::size_t n = std::min<std::size_t>(ring.readAvailable(), 1 + rng() % 500);
        if (n == 0) {
            std::this_thread::yield();
            continue;
        }
        ring.read(chunk.data(), n);
        for (std::size_t i = 0; i < n; ++i, ++expected)
            mismatches += chunk[i] != static_cast<float>(expected % 1000000);
    }
    producer.join();
    CHECK(mismatches == 0);
    CHECK(expected == total);
    CHECK(ring.readAvailable() == 0);
}
