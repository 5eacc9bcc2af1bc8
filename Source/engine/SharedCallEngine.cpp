// SPDX-License-Identifier: GPL-3.0-or-later
#include "engine/SharedCallEngine.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "aec/FilterPlan.h"
#include "engine/ThreadPriority.h"

namespace quell::engine {

namespace {

bool sameEngine(const SharedCallSettings& a, const SharedCallSettings& b)
{
    const MultiStreamSettings &x = a.engine, &y = b.engine;
    return x.canceller == y.canceller && x.sampleRate == y.sampleRate && x.farEndChannels == y.farEndChannels && x.maxStreams == y.maxStreams
           && x.threads == y.threads && x.threadPriority == y.threadPriority && a.batchWait == b.batchWait;
}

// maxStreams 0: 64 where the GPU batch can run (its cost hardly depends on the streams), else 8.
MultiStreamSettings resolved(MultiStreamSettings s)
{
    if (s.maxStreams != 0)
        return s;
    aec::EchoCancellerSettings probe = s.canceller;
    probe.filter = aec::FilterKind::Rls;
    if (probe.taps == 0)
        probe.taps = MultiStreamCanceller::kDefaultTaps;
    const dsp::ProcessSpec spec{s.sampleRate, static_cast<std::size_t>(aec::segmentSamples(s.sampleRate)), s.farEndChannels};
    const aec::FilterPlanResult plan = aec::planLinearFilter(probe, spec);
    const bool gpu = s.canceller.backend != aec::Backend::Cpu && plan.ok() && plan.plan.engine == aec::FilterEngine::GpuRls;
    s.maxStreams = gpu ? 64 : 8;
    return s;
}

} // namespace

// The process's engines: held weakly, so an engine goes with its last call.
struct SharedCallRegistry {
    struct Entry {
        SharedCallSettings settings;
        std::weak_ptr<SharedCallEngine> engine;
    };
    std::mutex mutex;
    std::vector<Entry> entries;

    static SharedCallRegistry& instance()
    {
        static SharedCallRegistry registry;
        return registry;
    }
};

SharedCallEngine::Membership SharedCallEngine::join(const SharedCallSettings& settings)
{
    SharedCallRegistry& registry = SharedCallRegistry::instance();
    // Held while a new engine prepares: two first calls of the same settings make one engine, not two.
    const std::lock_guard lock(registry.mutex);
    std::erase_if(registry.entries, [](const SharedCallRegistry::Entry& e) { return e.engine.expired(); });
    for (const SharedCallRegistry::Entry& e : registry.entries) {
        if (!sameEngine(e.settings, settings))
            continue;
        if (std::shared_ptr<SharedCallEngine> engine = e.engine.lock(); engine && !engine->failed()) {
            int stream = -1;
            if (engine->tryOpen(stream))
                return {std::move(engine), stream};
        }
    }
    auto engine = std::make_shared<SharedCallEngine>(settings);
    int stream = -1;
    if (!engine->tryOpen(stream))
        throw std::logic_error("SharedCallEngine: a new engine has no free stream");
    registry.entries.push_back({settings, engine});
    return {std::move(engine), stream};
}

SharedCallEngine::SharedCallEngine(const SharedCallSettings& settings)
    : batchWait_(settings.batchWait), priority_(settings.engine.threadPriority), rate_(settings.engine.sampleRate)
{
    if (settings.batchWait.count() < 0)
        throw std::invalid_argument("SharedCallEngine: a negative batch wait");
    calls_.prepare(resolved(settings.engine));
    const std::size_t n = blockSamples(), channels = static_cast<std::size_t>(settings.engine.farEndChannels);
    slots_.resize(static_cast<std::size_t>(calls_.maxStreams()));
    for (Slot& s : slots_) {
        s.mic.assign(n, 0.0f);
        s.far.assign(n * channels, 0.0f);
        s.out.assign(n, 0.0f);
    }
    batch_.reserve(slots_.size());
    thread_ = std::thread([this] { run(); });
}

SharedCallEngine::~SharedCallEngine()
{
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    work_.notify_all();
    done_.notify_all();
    thread_.join();
}

bool SharedCallEngine::tryOpen(int& stream)
{
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return !busy_; });
    if (!failure_.empty())
        return false;   // failed since the registry looked: the caller makes a new engine
    stream = calls_.open();
    if (stream < 0)
        return false;
    Slot& s = slots_[static_cast<std::size_t>(stream)];
    s.ready = s.done = s.active = s.behind = false;
    s.controls.reset();
    ++joined_;
    return true;
}

void SharedCallEngine::leave(int stream)
{
    {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return !busy_; });
        if (!calls_.isOpen(stream))
            throw std::invalid_argument("SharedCallEngine::leave: stream " + std::to_string(stream) + " has not joined");
        Slot& s = slots_[static_cast<std::size_t>(stream)];
        if (s.ready && failure_.empty())
            throw std::logic_error("SharedCallEngine::leave: stream " + std::to_string(stream) + " has a block in flight");
        if (s.ready) {   // handed in before the engine failed, its caller told so
            --ready_;
            behind_ -= s.behind ? 1 : 0;
        }
        if (s.active)
            --active_;
        s.ready = s.active = s.behind = false;
        calls_.close(stream);
        --joined_;
    }
    work_.notify_one();   // the batch may have waited for this call
}

void SharedCallEngine::setControls(int stream, const aec::CancellerControls& controls)
{
    const std::lock_guard lock(mutex_);
    if (!calls_.isOpen(stream))
        throw std::invalid_argument("SharedCallEngine::setControls: stream " + std::to_string(stream) + " has not joined");
    slots_[static_cast<std::size_t>(stream)].controls = controls;
}

void SharedCallEngine::process(int stream, const float* mic, std::span<const float* const> far, float* out, bool behind)
{
    const std::size_t n = blockSamples();
    if (far.size() != slots_.front().far.size() / n)
        throw std::invalid_argument("SharedCallEngine::process: " + std::to_string(far.size()) + " far-end channels, the engine takes "
                                    + std::to_string(slots_.front().far.size() / n));
    std::unique_lock lock(mutex_);
    if (!failure_.empty())
        throw std::runtime_error("the shared echo canceller failed: " + failure_);
    if (!calls_.isOpen(stream))
        throw std::invalid_argument("SharedCallEngine::process: stream " + std::to_string(stream) + " has not joined");
    Slot& s = slots_[static_cast<std::size_t>(stream)];
    if (s.ready)
        throw std::logic_error("SharedCallEngine::process: stream " + std::to_string(stream) + " from two threads at once");
    // The slot is not in a batch (its last block's batch is over), so it is filled under the lock only
    // for the flags' sake.
    std::copy_n(mic, n, s.mic.begin());
    for (std::size_t c = 0; c < far.size(); ++c)
        std::copy_n(far[c], n, s.far.begin() + static_cast<std::ptrdiff_t>(c * n));
    s.ready = true;
    s.done = false;
    s.behind = behind;
    behind_ += behind ? 1 : 0;
    behindBlocks_ += behind ? 1 : 0;
    if (!s.active) {
        s.active = true;
        ++active_;
    }
    const auto handedIn = std::chrono::steady_clock::now();
    if (ready_++ == 0)
        firstReady_ = handedIn;
    work_.notify_one();
    done_.wait(lock, [&] { return s.done || stopping_ || !failure_.empty(); });
    if (!failure_.empty()) {
        s.ready = false;
        throw std::runtime_error("the shared echo canceller failed: " + failure_);
    }
    if (!s.done)
        throw std::runtime_error("SharedCallEngine: stopped with a block in flight");
    turnaroundTimes_.add(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - handedIn).count());
    std::copy_n(s.out.begin(), n, out);
}

void SharedCallEngine::run()
{
    if (priority_ > 0)
        raiseCurrentThreadPriority(priority_);   // it takes the pool's items too (MultiStreamCanceller.h)
    using Clock = std::chrono::steady_clock;
    std::unique_lock lock(mutex_);
    // A batch of some streams leaves the others as they were (on the GPU too: a held stream of the batch
    // filter), so one that is behind need not wait for the rest: it may run a batch of its own (a
    // catch-up batch) once the engine has rested as long as its last batch took. Without that rest, on
    // the GPU, where a batch costs much the same for one call as for all, each call behind ran a batch of
    // its own at once: 64 live pipelines ran 1,500 batches a second of four calls each, and 256 fell
    // further behind than they started (H100, 2026-12-07). With it the engine is busy at most half the
    // time on catch-up batches, and the calls that hand in meanwhile go in the same batch. While a batch
    // takes more than half the period there is no room for them: they would take the place of full
    // batches (256 calls of the RLS batch on an H100, whose batch took 7 ms: 129,425 buffers dropped in lock
    // step, 244,755 with catch-up batches after a rest), so the calls go in lock step. On the CPU a batch
    // costs in proportion to its calls, and a catch-up batch runs at once, as it always did there.
    const bool restBeforeCatchUp = calls_.onGpu();
    const Clock::duration period = std::chrono::microseconds(static_cast<std::int64_t>(1e6 * static_cast<double>(blockSamples()) / rate_));
    Clock::time_point catchUpAt{};
    const auto runnable = [&] {
        return stopping_ || ready_ == 0 || ready_ >= active_ || (behind_ > 0 && Clock::now() >= catchUpAt);
    };
    while (true) {
        work_.wait(lock, [&] { return stopping_ || ready_ > 0; });
        if (stopping_)
            return;
        while (!runnable()) {
            const Clock::time_point deadline = firstReady_ + batchWait_;
            if (work_.wait_until(lock, behind_ > 0 ? std::min(deadline, catchUpAt) : deadline) == std::cv_status::timeout
                && Clock::now() >= deadline)
                break;
        }
        if (stopping_)
            return;
        if (ready_ == 0)
            continue;   // the only blocks waiting left with their calls
        // Run before the wait is over for streams behind: the others are not late.
        const bool catchUpBatch = ready_ < active_ && std::chrono::steady_clock::now() < firstReady_ + batchWait_;
        batch_.clear();
        std::uint64_t missed = 0;
        for (std::size_t i = 0; i < slots_.size(); ++i) {
            Slot& s = slots_[i];
            if (!s.ready) {
                if (s.active && !catchUpBatch) {   // it missed this batch: not waited for until its next block
                    s.active = false;
                    --active_;
                    ++missed;
                }
                continue;
            }
            s.ready = false;
            s.behind = false;
            if (s.controls) {
                calls_.setControls(static_cast<int>(i), *s.controls);
                s.controls.reset();
            }
            MultiStreamCanceller::StreamBlock b;
            b.stream = static_cast<int>(i);
            b.mic = s.mic.data();
            for (std::size_t c = 0; c * blockSamples() < s.far.size(); ++c)
                b.ref[c] = s.far.data() + c * blockSamples();
            b.out = s.out.data();
            batch_.push_back(b);
        }
        missed_ += missed;
        ready_ = 0;
        behind_ = 0;
        busy_ = true;
        const auto start = std::chrono::steady_clock::now();
        waitTimes_.add(std::chrono::duration_cast<std::chrono::nanoseconds>(start - firstReady_).count());
        lock.unlock();
        std::string failure;
        try {
            calls_.process(batch_);
        } catch (const std::exception& e) {
            failure = e.what();
        }
        const auto end = std::chrono::steady_clock::now();
        if (restBeforeCatchUp)
            catchUpAt = 2 * (end - start) > period ? Clock::time_point::max() : end + (end - start);
        lock.lock();
        batchTimes_.add(std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
        busy_ = false;
        if (!failure.empty()) {
            // Every call waiting, and every later block, gets the reason; the engine runs no more batches.
            failure_ = failure;
            ready_ = 0;
            done_.notify_all();
            work_.wait(lock, [&] { return stopping_; });
            return;
        }
        ++batches_;
        for (const MultiStreamCanceller::StreamBlock& b : batch_)
            slots_[static_cast<std::size_t>(b.stream)].done = true;
        done_.notify_all();
    }
}

std::chrono::microseconds SharedCallEngine::engineDelay() const
{
    const auto period = std::chrono::microseconds(static_cast<std::int64_t>(1e6 * static_cast<double>(blockSamples()) / rate_));
    return batchWait_ + period;
}

int SharedCallEngine::joined() const
{
    const std::lock_guard lock(mutex_);
    return joined_;
}

dsp::RlsHealth SharedCallEngine::health(int stream) const
{
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return !busy_; });
    return calls_.health(stream);
}

std::optional<double> SharedCallEngine::erleDb(int stream) const
{
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return !busy_; });
    return calls_.erleDb(stream);
}

std::uint64_t SharedCallEngine::batches() const
{
    const std::lock_guard lock(mutex_);
    return batches_;
}

SharedCallEngine::Timing SharedCallEngine::timing() const
{
    const std::lock_guard lock(mutex_);
    return {waitTimes_.summary(), batchTimes_.summary(), turnaroundTimes_.summary(), batches_, missed_, behindBlocks_};
}

std::string SharedCallEngine::timingText() const
{
    const Timing t = timing();
    char text[256];
    std::snprintf(text, sizeof text,
                  "%llu batches, %llu blocks missed, %llu behind; wait %.2f / %.2f ms, batch %.2f / %.2f ms, turnaround %.2f / %.2f ms "
                  "(median / p99.9)",
                  static_cast<unsigned long long>(t.batches), static_cast<unsigned long long>(t.missed), static_cast<unsigned long long>(t.behind),
                  t.wait.medianUs / 1e3,
                  t.wait.p999Us / 1e3, t.batch.medianUs / 1e3, t.batch.p999Us / 1e3, t.turnaround.medianUs / 1e3, t.turnaround.p999Us / 1e3);
    return text;
}

bool SharedCallEngine::failed() const
{
    const std::lock_guard lock(mutex_);
    return !failure_.empty();
}

std::uint64_t SharedCallEngine::missed() const
{
    const std::lock_guard lock(mutex_);
    return missed_;
}

} // namespace quell::engine
