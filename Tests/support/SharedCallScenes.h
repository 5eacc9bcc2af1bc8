// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A scene of the shared calls' tests (Tests/cpu/SharedCallTests.cpp, Tests/gpu/GpuSharedCallTests.cpp): a
// call that fell behind beside one that runs in real time.
#include <chrono>
#include <thread>
#include <vector>

#include "engine/SharedCall.h"
#include "support/OfflineRecordings.h"

namespace quell::test {

struct CatchUpRun {
    std::vector<float> out;   // the call behind's output, finished
    double seconds = 0.0;     // how long its one process() of the whole recording took
};

// `paced` hands in a 10 ms block every 10 ms for 1.5 s; 0.2 s in, `behind` hands in the whole recording r
// (16 kHz, about a second) at once. In lock step with the paced call that takes a second.
inline CatchUpRun runBehindBesidePaced(engine::SharedCall& paced, engine::SharedCall& behind, const OfflineRecording& r)
{
    std::vector<float> pacedOut;
    std::thread pacer([&] {
        const std::vector<float> x = cast<float>(colouredNoise(160, 5, 0.1));
        const std::span<const float> far[1] = {x};
        auto next = std::chrono::steady_clock::now();
        for (int b = 0; b < 150; ++b) {
            next += std::chrono::milliseconds(10);
            paced.process(x, far, pacedOut);
            std::this_thread::sleep_until(next);
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CatchUpRun run;
    std::vector<float> far(r.mic[0].size(), 0.0f);
    std::copy(r.far.begin(), r.far.end(), far.begin());
    const std::span<const float> refs[1] = {far};
    const auto t0 = std::chrono::steady_clock::now();
    behind.process(r.mic[0], refs, run.out);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    pacer.join();
    behind.finish(run.out);
    return run;
}

} // namespace quell::test
