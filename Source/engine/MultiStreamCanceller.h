// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Many calls' echo cancellers in one object, for a server (issue 18's many-calls tier): every call is a
// stream of the same rate and settings; calls join (open) and leave (close) at any time; each process()
// takes one 10 ms block of every stream that has one. The streams' adaptive filters run as one batch
// (aec::LinearFilterBatch): on the GPU one batched block-exact RLS, or one batched frequency-domain Kalman
// filter, takes all of them in each launch, one upload and one download per block for the whole batch; on the CPU each stream's filter runs on the
// pool's threads. Everything else of a canceller (high-pass, delay alignment, the two-path foreground,
// output guard, residual suppression) is each stream's own aec::EchoCanceller, run on the pool's threads
// before and after the batch (EchoCanceller::beginBlock / finishBlock): each stream's output is what a
// canceller of its own with the same filter gives, sample for sample (the GPU Kalman batch: the CPU Kalman
// filter's with the batch's block, up to float rounding).
//
// Not here (yet): the streams' high-pass, resampling and suppression on the GPU; streams at other rates
// than the batch's (a caller resamples).
//
// Threading: prepare(), open(), close() and process() from one thread (the server's block loop); process()
// allocates nothing and runs the streams on the pool's threads, which it waits for.
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "aec/EchoCanceller.h"
#include "aec/LinearFilterBatch.h"
#include "engine/WorkerPool.h"

namespace quell::engine {

struct MultiStreamSettings {
    // Every stream's canceller. taps 0: 1024 (64 ms at 16 kHz), as the CPU's RLS: a batch's length is a
    // choice of capacity, not measured per stream. backend, filter: as a lone canceller's (Auto: the GPU
    // RLS batch where a GPU can run it, else the CPU's choice offline), except that filter Kalman runs as
    // one batched GPU Kalman filter where the backend allows it (Gpu, or Auto with a usable GPU and one
    // far-end channel; a lone canceller's Kalman filter is the CPU's). The Kalman filter's block, when
    // automatic, is the largest that divides the 10 ms calls (aec::kalmanBatchBlockSize: 32 at 16 kHz).
    aec::EchoCancellerSettings canceller{};
    int sampleRate = aec::kCancellerRate;
    int farEndChannels = 1;
    int maxStreams = 64;     // streams prepared (memory for each is taken at prepare)
    int threads = 0;         // threads for the streams' CPU work, the caller's included (0: the hardware's)
    // The pool's threads ask for real-time scheduling at this priority (ThreadPriority.h; 0: normal
    // threads). The caller's thread takes items too: a server gives its block loop the same.
    int threadPriority = 60;
};

class MultiStreamCanceller {
public:
    static constexpr int kDefaultTaps = 1024;

    // Allocates every stream. Throws std::invalid_argument on bad settings (the reason),
    // aec::BackendUnavailable when the GPU is required and cannot run the batch.
    void prepare(const MultiStreamSettings& settings);
    // Samples of every stream per process() call: 10 ms.
    std::size_t blockSamples() const { return block_; }
    int maxStreams() const { return static_cast<int>(cancellers_.size()); }
    int openStreams() const { return open_; }
    // A free stream, reset to a new canceller's state: its id; -1 when all are in use.
    int open();
    void close(int stream);
    bool isOpen(int stream) const;

    // One block: blockSamples() of each stream named (every stream at most once, each open); its
    // far-end channels at ref[0..farEndChannels). An open stream without a block this time holds still:
    // neither its canceller nor its filter runs (on the GPU its batch filter sits the call out), so its
    // samples are those of a canceller given only its own blocks, whenever they come.
    struct StreamBlock {
        int stream = -1;
        const float* mic = nullptr;
        const float* ref[aec::kMaxFarEndChannels] = {};
        float* out = nullptr;   // may be mic
    };
    void process(std::span<const StreamBlock> blocks);

    const aec::EchoCanceller& canceller(int stream) const { return *cancellers_.at(static_cast<std::size_t>(stream)); }
    // A stream's controls (adaptation freeze, suppression, comfort noise), as a lone canceller's
    // setControls; from the thread that calls process(), between calls. open() sets the defaults again.
    void setControls(int stream, const aec::CancellerControls& controls);
    // A stream's echo return loss enhancement over its last second of far end (microphone energy over
    // output energy, summed over its last 100 blocks with a far end above -60 dBFS), in dB; empty before
    // the first such block. For a server's monitoring: quell-eval's steady-state figures are measured on
    // known echo, not on the microphone.
    std::optional<double> erleDb(int stream) const;
    dsp::RlsHealth health(int stream) const { return canceller(stream).health(); }
    int latencySamples() const { return cancellers_.empty() ? 0 : cancellers_.front()->latencySamples(); }
    // The batch's filter and where it runs, e.g. "GPU float32 block RLS batch (256 streams, ...), 1024 taps, on ...".
    std::string description() const { return batch_ ? batch_->description() : std::string(); }
    bool onGpu() const { return batch_ && batch_->onGpu(); }
    const aec::FilterPlan& plan() const { return plan_; }
    int threads() const { return pool_ ? pool_->threads() : 0; }
    // What the pool's threads got: "real-time", "nice -20" or "normal".
    std::string threadPriority() const { return pool_ ? describe(pool_->priority()) : std::string(); }
    // Where the last process() call's time went, in microseconds: the streams' cancellers up to their
    // filters, the batch's filter (0 on the CPU, where each stream's filter runs within `before`), and the
    // cancellers after it.
    struct Timing {
        double beforeUs = 0.0, filterUs = 0.0, afterUs = 0.0;
    };
    const Timing& lastTiming() const { return timing_; }

private:
    MultiStreamSettings settings_{};
    aec::FilterPlan plan_{};
    std::size_t block_ = 0;
    std::unique_ptr<aec::LinearFilterBatch> batch_;
    std::vector<std::unique_ptr<aec::EchoCanceller>> cancellers_;
    std::vector<unsigned char> isOpen_, idle_;
    std::vector<aec::EchoCanceller::FilterCall> calls_;   // per block of the call under way
    // Per stream: the running energies behind erleDb(), and the block's microphone and far-end energies
    // taken before it ran (its output may overwrite its microphone).
    // (An exponential average was tried first: a second's memory still held the unconverged first blocks'
    // echo 50 dB above the converged output, 18.8 dB where the last second measured 59.8.)
    struct Levels {
        int measured = 0, next = 0;      // blocks in the ring, and where the next one goes
        double blockMic = 0.0, blockFarMeanSquare = 0.0;
    };
    static constexpr int kErleBlocks = 100;
    std::vector<Levels> levels_;
    std::vector<double> levelRing_;   // per stream kErleBlocks (microphone, output) energy pairs
    void measureInputs(const StreamBlock& b);
    void measureOutput(const StreamBlock& b);
    std::unique_ptr<WorkerPool> pool_;
    int open_ = 0;
    Timing timing_{};
};

} // namespace quell::engine
