// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/Rls.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dsp/RlsRowKernels.h"

namespace quell::dsp {

namespace detail {

// A persistent pool for the per-sample row pass. run() hands the same job to every thread (the caller
// is thread 0) and returns when all have finished: one release/acquire round per sample. Workers spin
// for a while (a sample of N >= 512 lasts tens of microseconds, a futex wake-up about as long) and then
// block in atomic::wait, so an idle pool between process() calls costs no CPU.
class RowWorkerPool {
public:
    using Job = void (*)(void* context, int thread, int threads);

    explicit RowWorkerPool(int threads)
    {
        for (int t = 1; t < threads; ++t)
            workers_.emplace_back([this, t] { workerLoop(t); });
    }
    ~RowWorkerPool()
    {
        stop_.store(true, std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        for (auto& w : workers_)
            w.join();
    }
    RowWorkerPool(const RowWorkerPool&) = delete;
    RowWorkerPool& operator=(const RowWorkerPool&) = delete;

    int threads() const { return static_cast<int>(workers_.size()) + 1; }

    void run(Job job, void* context)
    {
        job_ = job;
        context_ = context;
        done_.store(0, std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        job(context, 0, threads());
        const int workers = static_cast<int>(workers_.size());
        for (unsigned spins = 0; done_.load(std::memory_order_acquire) < workers; ++spins)
            pause(spins);
    }

private:
    static void pause(unsigned spins)
    {
        if (spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            std::this_thread::yield(); // oversubscribed machine: let the thread we wait for run
        }
    }

    void workerLoop(int index)
    {
        unsigned seen = 0;
        for (;;) {
            unsigned now = generation_.load(std::memory_order_acquire);
            for (unsigned spins = 0; now == seen; ++spins) {
                if (spins < (1u << 16)) {
                    pause(0);
                } else {
                    generation_.wait(seen, std::memory_order_acquire);
                    spins = 0;
                }
                now = generation_.load(std::memory_order_acquire);
            }
            seen = now;
            if (stop_.load(std::memory_order_relaxed))
                return;
            job_(context_, index, threads());
            done_.fetch_add(1, std::memory_order_release);
        }
    }

    std::vector<std::thread> workers_;
    Job job_ = nullptr;
    void* context_ = nullptr;
    std::atomic<bool> stop_{false};
    alignas(64) std::atomic<unsigned> generation_{0};
    alignas(64) std::atomic<int> done_{0};
};

} // namespace detail

template <typename T>
Rls<T>::Rls() = default;
template <typename T>
Rls<T>::~Rls() = default;
template <typename T>
Rls<T>::Rls(Rls&&) noexcept = default;
template <typename T>
Rls<T>& Rls<T>::operator=(Rls&&) noexcept = default;

template <typename T>
void Rls<T>::setWorkerThreads(int threads)
{
    if (threads < 0 || threads > 256)
        throw std::invalid_argument("Rls::setWorkerThreads: threads must be in [0, 256] (got "
                                    + std::to_string(threads) + ")");
    requestedThreads_ = threads;
    configureWorkers();
}

template <typename T>
int Rls<T>::workerThreads() const
{
    return pool_ ? pool_->threads() : 1;
}

template <typename T>
void Rls<T>::configureWorkers()
{
    int threads = requestedThreads_;
    if (threads == 0) {
        const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        threads = taps_ >= 512 ? std::min({hardware, 16, taps_ / 128}) : 1;
    }
    threads = std::clamp(threads, 1, std::max(1, taps_));
    if (threads == workerThreads() && (threads == 1) == (pool_ == nullptr))
        return;
    pool_.reset();
    if (threads > 1)
        pool_ = std::make_unique<detail::RowWorkerPool>(threads);
}

template <typename T>
void Rls<T>::rowPass(std::size_t begin, std::size_t end, bool pending)
{
    T* p = p_.data() + begin * stride_;
    if (pending) {
        for (std::size_t i = begin; i < end; ++i, p += stride_)
            vNext_[i] = detail::rowUpdateDot(p, v_, v_[i], pendingR_, invLambdaNow_, u_.data(), stride_);
    } else {
        for (std::size_t i = begin; i < end; ++i, p += stride_)
            vNext_[i] = detail::dot(p, u_.data(), stride_);
    }
}

void validateDelta(double delta)
{
    if (!(delta > 0.0) || !std::isfinite(delta))
        throw std::invalid_argument("delta must be positive (got " + std::to_string(delta) + ")");
}

double traceBound(const RlsSettings& s) { return static_cast<double>(s.totalTaps()) / s.delta; }

void validate(const RlsSettings& s)
{
    if (s.channels < 1 || s.channels > 8)
        throw std::invalid_argument("RLS channels must be 1 to 8 (got " + std::to_string(s.channels) + ")");
    if (s.tapsPerChannel < 1 || s.totalTaps() > 16384)
        throw std::invalid_argument("taps must be at least 1 per channel and at most 16384 in all (got " + std::to_string(s.channels)
                                    + " x " + std::to_string(s.tapsPerChannel) + ")");
    if (!(s.lambda > 0.0 && s.lambda <= 1.0) || !(s.lambda >= 0.9))
        throw std::invalid_argument("lambda must lie in [0.9, 1] (got " + std::to_string(s.lambda) + ")");
    validateDelta(s.delta);
    if (!(s.silenceFloor >= 0.0))
        throw std::invalid_argument("silenceFloor must be non-negative");
    if (s.traceCheckSamples < 1)
        throw std::invalid_argument("traceCheckSamples must be positive");
}

template <typename T>
void Rls<T>::prepare(const RlsSettings& settings)
{
    validate(settings);
    settings_ = settings;
    taps_ = settings.totalTaps();
    stride_ = (static_cast<std::size_t>(taps_) + 15) / 16 * 16;
    lambda_ = T(settings.lambda);
    invLambda_ = T(1.0 / settings.lambda);
    p_.resize(stride_ * stride_);
    w_.resize(stride_);
    u_.prepare(taps_, settings.channels, stride_);
    vA_.resize(stride_);
    vB_.resize(stride_);
    configureWorkers();
    reset();
}

template <typename T>
void Rls<T>::reinitialiseP()
{
    p_.zero();
    const T diag = T(1.0 / restartDelta_);
    for (int i = 0; i < taps_; ++i)
        p_[static_cast<std::size_t>(i) * stride_ + i] = diag;
    pending_ = false;
}

template <typename T>
void Rls<T>::setRestartDelta(double delta)
{
    validateDelta(delta);
    restartDelta_ = delta;
    RlsSettings bound = settings_;
    bound.delta = delta;
    traceBound_ = traceBound(bound);
}

template <typename T>
void Rls<T>::reset()
{
    setRestartDelta(settings_.delta);
    reinitialiseP();
    w_.zero();
    u_.reset();
    vA_.zero();
    vB_.zero();
    v_ = vA_.data();
    vNext_ = vB_.data();
    health_ = {};
    lambdaNow_ = lambda_;
    invLambdaNow_ = invLambda_;
    sinceCheck_ = 0;
}

template <typename T>
T Rls<T>::processSample(T d, const T* x)
{
    // The trace check falls between samples k * interval and k * interval + 1 since reset.
    if (++sinceCheck_ > settings_.traceCheckSamples) {
        updateForgetting();
        sinceCheck_ = 1;
    }
    const std::size_t n = static_cast<std::size_t>(taps_);
    const bool badMic = !std::isfinite(d);
    if (badMic)
        d = T(0);
    if (u_.push(x) || badMic)
        ++health_.sanitisedSamples;

    // Fused pass: the deferred update of P (sample n-1) and v(n) = P(n-1) u(n), one row at a time;
    // with workers, each thread takes a contiguous range of rows.
    if (pool_) {
        struct Context {
            Rls* self;
            std::size_t n;
            bool pending;
        } context{this, n, pending_};
        pool_->run(
            [](void* c, int t, int threads) {
                const Context& ctx = *static_cast<const Context*>(c);
                const std::size_t begin = ctx.n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
                const std::size_t end = ctx.n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
                ctx.self->rowPass(begin, end, ctx.pending);
            },
            &context);
    } else {
        rowPass(0, n, pending_);
    }
    pending_ = false;
    std::swap(v_, vNext_);

    const T e = d - detail::dot(w_.data(), u_.data(), stride_);
    if (!adapting_ || u_.energy() <= settings_.silenceFloor * static_cast<double>(n)) {
        ++health_.pausedSamples;
        return e;
    }
    const T alpha = lambdaNow_ + detail::dot(u_.data(), v_, stride_);
    if (!(alpha >= T(0.5) * lambdaNow_) || !std::isfinite(alpha) || !std::isfinite(e)) {
        ++health_.reinitialisations;
        reinitialiseP();
        if (!std::isfinite(e))
            w_.zero();
        return std::isfinite(e) ? e : d;
    }
    const T r = T(1) / alpha;
    const T g = e * r;
    for (std::size_t i = 0; i < n; ++i)
        w_[i] += g * v_[i];
    pending_ = true;
    pendingR_ = r;
    return e;
}

template <typename T>
void Rls<T>::process(std::span<const T> mic, std::span<const T> ref, std::span<T> out)
{
    if (mic.size() != ref.size() || out.size() < mic.size())
        throw std::invalid_argument("Rls::process: mic, ref and out must have the same length");
    if (settings_.channels != 1)
        throw std::invalid_argument("Rls::process: this filter has " + std::to_string(settings_.channels)
                                    + " far-end channels: use processInterleaved");
    for (std::size_t i = 0; i < mic.size(); ++i)
        out[i] = processSample(mic[i], &ref[i]);
}

template <typename T>
void Rls<T>::updateForgetting()
{
    double trace = 0.0;
    for (int i = 0; i < taps_; ++i)
        trace += static_cast<double>(p_[static_cast<std::size_t>(i) * stride_ + i]);
    const bool forgetting = !(trace > traceBound_);
    lambdaNow_ = forgetting ? lambda_ : T(1);
    invLambdaNow_ = forgetting ? invLambda_ : T(1);
}

template <typename T>
void Rls<T>::processInterleaved(std::span<const T> mic, std::span<const T> ref, std::span<T> out)
{
    const std::size_t channels = static_cast<std::size_t>(settings_.channels);
    if (ref.size() != mic.size() * channels || out.size() < mic.size())
        throw std::invalid_argument("Rls::processInterleaved: ref must hold channels x mic samples, out at least mic's");
    for (std::size_t i = 0; i < mic.size(); ++i)
        out[i] = processSample(mic[i], &ref[i * channels]);
}

template class Rls<float>;
template class Rls<double>;

} // namespace quell::dsp
