// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Exponentially weighted RLS adaptive filter (echo canceller form): for each sample the far-end
// regressor u(n) = [x(n) .. x(n-N+1)] predicts the microphone d(n); the output is the a-priori error
// e(n) = d(n) - w(n-1)^T u(n), i.e. the echo-cancelled microphone. With C far-end channels (a stereo
// loudspeaker pair) u(n) stacks N/C samples of each: one filter for the whole multichannel echo path, so
// the correlation between the channels is learnt rather than mistaken for a changing path.
//
// The computation order is that of Hirano & Nakayama (paper 001, eqs. 9-17): the rank-one update of P
// for sample n-1 is deferred and fused with v(n) = P(n-1) u(n), so every element of P is read once and
// written once per sample. The GPU kernel (Kernels/rls) uses the same order and the same safeguards;
// this class is its CPU twin: float64 is the reference, float32 the fallback and benchmark peer.
//
// Numerical safeguards (shared with the GPU kernel, see Kernels/rls/README.md for the experiments):
//  - Bounded trace: exponential forgetting divides all of P by lambda every sample, so the directions a
//    band-limited far end never excites (a narrowband call upsampled to 16 kHz: nothing above 3.4 kHz)
//    grow as lambda^-n until P is no longer positive definite and is re-initialised (every 5 s at 256
//    taps, measured). Every traceCheckSamples samples the trace of P is compared with its initial value
//    (taps / delta, traceBound()): above it, the next call runs without forgetting (lambda = 1), so P
//    never holds more uncertainty in total than it started with. Speech and noise far ends never reach
//    the bound (their P is orders of magnitude below P(0)); the GPU kernel makes the same decision after
//    each launch. (Directional forgetting, which forgets only along the excited direction, was tried:
//    with the same lambda it remembers about taps times longer for a broadband far end and no longer
//    follows an echo-path change.)
//  - P is updated as p_ij <- (p_ij - (v_i v_j) / alpha) / lambda with the product v_i v_j formed first,
//    so p_ij and p_ji receive bit-identical updates and P stays exactly symmetric in float32.
//  - Adaptation pauses while the far-end power (mean of u^2) is below `silenceFloor`: with u = 0 the
//    RLS recursion would grow P as lambda^-n and the first sample after a silence would blow up.
//  - Loss of positive definiteness shows as alpha = lambda + u^T P u < lambda; then (or on any
//    non-finite value) P is re-initialised to I/delta while w is kept, so the output does not jump.
//  - Non-finite input samples are replaced by zero (and counted) before they reach the state.
// Threading: one thread at a time calls process(), which never allocates after prepare(). For large N
// the row pass is split over a persistent pool of worker threads (setWorkerThreads), which meet the
// calling thread at a spin barrier once per sample; every row is computed by the same code whichever
// thread runs it, so the output is bit-identical with and without workers.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "dsp/AlignedBuffer.h"
#include "dsp/RlsRegressor.h"
#include "dsp/RlsSettings.h"

namespace quell::dsp {

namespace detail {
class RowWorkerPool;
}

template <typename T>
class Rls {
public:
    Rls();
    ~Rls();
    Rls(Rls&&) noexcept;
    Rls& operator=(Rls&&) noexcept;

    void prepare(const RlsSettings& settings);
    void reset();
    // Forgets the covariance (P = I / delta) and keeps the weights: re-convergence within a few filter
    // lengths after the echo path changed (see aec/PathChangeDetector.h).
    void restartCovariance() { reinitialiseP(); }
    // The delta of every later re-initialisation of P (restartCovariance() and the automatic ones), and
    // the bounded trace's bound with it, until reset() goes back to settings().delta: the canceller
    // matches delta to a quiet far end's level (aec/FarEndLevelMatch.h). Throws std::invalid_argument
    // unless positive and finite.
    void setRestartDelta(double delta);
    // Off: no sample updates w or P (each counts as paused), as on far-end silence; the echo canceller
    // turns adaptation off while the far end cannot explain what the microphone hears.
    void setAdaptation(bool on) { adapting_ = on; }
    bool adapting() const { return adapting_; }

    // mic = d, ref = x (far end), out = e; all the same length. out may alias mic. One far-end channel.
    void process(std::span<const T> mic, std::span<const T> ref, std::span<T> out);
    // Several far-end channels (settings.channels): ref interleaved, channels x mic.size() samples.
    void processInterleaved(std::span<const T> mic, std::span<const T> ref, std::span<T> out);

    std::span<const T> weights() const { return {w_.data(), static_cast<std::size_t>(taps_)}; }
    const RlsHealth& health() const { return health_; }
    const RlsSettings& settings() const { return settings_; }
    int taps() const { return taps_; }

    // Threads for the row pass: 0 = automatic (the default: from 512 taps on, one thread per 128 rows,
    // at most the hardware threads and 16), 1 = the calling thread only, n = n threads in all.
    void setWorkerThreads(int threads);
    int workerThreads() const;

private:
    T processSample(T d, const T* x);   // x: one sample per far-end channel
    void reinitialiseP();
    void updateForgetting();
    void rowPass(std::size_t begin, std::size_t end, bool pending);
    void configureWorkers();

    RlsSettings settings_{};
    int taps_ = 0;
    std::size_t stride_ = 0;   // row length padded to a multiple of 16 elements
    T lambda_{}, invLambda_{};
    // Bounded trace: every settings_.traceCheckSamples samples, forgetting stays on (lambdaNow_ = lambda)
    // while trace(P) <= traceBound_, and is off (1) until it falls back.
    T lambdaNow_{}, invLambdaNow_{};
    double traceBound_ = 0.0;
    double restartDelta_ = 0.0;   // P = I / restartDelta_ at a re-initialisation
    int sinceCheck_ = 0;
    AlignedBuffer<T> p_, w_, vA_, vB_;
    RlsRegressor<T> u_;
    T* v_ = nullptr;           // v(n) of the last sample
    T* vNext_ = nullptr;
    bool pending_ = false;     // a deferred rank-one update of P is due
    bool adapting_ = true;
    T pendingR_{};             // 1 / alpha of the deferred update
    RlsHealth health_{};
    int requestedThreads_ = 0;
    std::unique_ptr<detail::RowWorkerPool> pool_;
};

extern template class Rls<float>;
extern template class Rls<double>;

} // namespace quell::dsp
