// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU RLS with worker threads gives bit-identical output to the single-threaded run (each row is
// computed by the same code whichever thread runs it), whatever the thread count and block split.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "dsp/Rls.h"
#include "support/Signals.h"

namespace {

template <typename T>
std::vector<T> run(int taps, int threads, std::size_t block, const std::vector<double>& x, const std::vector<double>& d)
{
    quell::dsp::RlsSettings s;
    s.tapsPerChannel = taps;
    quell::dsp::Rls<T> rls;
    rls.setWorkerThreads(threads);
    rls.prepare(s);
    const std::vector<T> xx(x.begin(), x.end()), dd(d.begin(), d.end());
    std::vector<T> e(x.size());
    for (std::size_t i = 0; i < x.size(); i += block) {
        const std::size_t n = std::min(block, x.size() - i);
        rls.process(std::span<const T>(dd).subspan(i, n), std::span<const T>(xx).subspan(i, n),
                    std::span<T>(e).subspan(i, n));
    }
    if (threads > 1)
        CHECK(rls.workerThreads() == threads);
    return e;
}

template <typename T>
void checkThreadsAgree(int taps)
{
    const std::size_t samples = 3001;
    const std::vector<double> x = quell::test::colouredNoise(samples, 5u);
    const std::vector<double> h = quell::test::randomSystem(static_cast<std::size_t>(taps) / 2, 6u, taps / 8.0);
    std::vector<double> d = quell::test::convolve(x, h);
    const std::vector<T> single = run<T>(taps, 1, samples, x, d);
    for (int threads : {2, 3, 7}) {
        const std::vector<T> threaded = run<T>(taps, threads, threads == 3 ? 37 : samples, x, d);
        INFO("taps " << taps << ", threads " << threads);
        CHECK(std::memcmp(single.data(), threaded.data(), single.size() * sizeof(T)) == 0);
    }
}

} // namespace

TEST_CASE("Rls with worker threads is bit-identical to one thread", "[rls][threads]")
{
    checkThreadsAgree<float>(600);
    checkThreadsAgree<float>(1001);
    checkThreadsAgree<double>(523);
}

TEST_CASE("Rls worker threads: automatic choice and validation", "[rls][threads]")
{
    quell::dsp::RlsSettings s;
    s.tapsPerChannel = 64;
    quell::dsp::Rls<float> small;
    small.prepare(s);
    CHECK(small.workerThreads() == 1); // below 512 taps the row pass stays on the calling thread
    CHECK_THROWS_AS(small.setWorkerThreads(-1), std::invalid_argument);
    small.setWorkerThreads(4);
    CHECK(small.workerThreads() == 4);
    small.setWorkerThreads(1);
    CHECK(small.workerThreads() == 1);
}
