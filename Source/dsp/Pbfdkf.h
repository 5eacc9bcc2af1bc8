// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Partitioned-block frequency-domain adaptive Kalman filter (PBFDKF; Enzner and Vary 2006, Kuech,
// Mabande and Enzner 2014): the echo path as P partitions of B taps per far-end channel, each a state
// per DFT bin (M = 2B) with its own uncertainty Phi. Once per block of B samples every bin takes the
// Kalman step
//     mu_p = Phi_p / (R/M * sum_q Phi_q |X_q|^2 + |E|^2)          (R/M = 1/2: half the window is new)
//     W_p += constrain(mu_p X_p^* E)                                (the update's taps beyond B are cut)
//     Phi_p = min(A^2 (1 - R/M mu_p |X_p|^2) Phi_p + (1 - A^2) |W_p|^2, Phi_0(0))
// where E is the block's error. The step follows the uncertainty and shrinks by itself when the error
// holds more than the filter can explain (double talk), so no detector is needed; it costs O(log B)
// per tap and sample instead of RLS's O(N). Phi never exceeds its start: in the bins a narrowband far
// end never excites, the process noise (1 - A^2)|W|^2 and the constraint's leakage fed each other and
// the weights grew without bound (2199 x the path's energy after 30 s of a 1 kHz tone, measured).
//
// The output is sample by sample, with no added latency: each sample's error is the microphone minus
// the filter on the regressor of that sample, as the block algorithm defines it (the weights change only
// at block ends), so any split of the input into calls gives the same samples. The filter's output is
// split where the block starts: what the earlier blocks' far end contributes to the whole block is
// computed once at its start in the frequency domain (the partitions' weight spectra against the far-end
// spectra already in the ring, one FFT and one inverse), and only the block's own samples meet the taps
// sample by sample (i + 1 taps for the block's i-th sample). At 4096 taps that is 40x less work than the
// time-domain filter on the whole regressor, which cost more than the adaptation (quell-live at 48 kHz:
// 2.7 ms a 1024-frame block). Several far-end channels are one state: their
// partitions share the denominator (a stereo pair's echo paths learnt together, as dsp::Rls does).
//
// Threading: one thread at a time; process() never allocates after prepare().
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

#include "dsp/AlignedBuffer.h"
#include "dsp/RealFft.h"
#include "dsp/PbfdkfSettings.h"
#include "dsp/RlsSettings.h"

namespace quell::dsp {

class Pbfdkf {
public:
    void prepare(const PbfdkfSettings& settings);
    // Weights, uncertainty, far-end history and counters to their initial state.
    void reset();
    // Phi = Phi(0) (measured again on the next active block) with the weights kept: the filter re-learns
    // fast after the echo path changed.
    void restartUncertainty();
    // Off: weights and uncertainty stay as they are (the samples count as paused).
    void setAdaptation(bool on) { adapting_ = on; }
    bool adapting() const { return adapting_; }

    // mic = d, ref = x (far end), out = e; all the same length; out may alias mic. One far-end channel.
    void process(std::span<const float> mic, std::span<const float> ref, std::span<float> out);
    // Several far-end channels: ref interleaved, channels x mic.size() samples.
    void processInterleaved(std::span<const float> mic, std::span<const float> ref, std::span<float> out);

    // channels x taps, channel-major, tap 0 the newest sample (the layout of dsp::Rls's weights).
    std::span<const float> weights() const { return {weights_.data(), weights_.size()}; }
    const RlsHealth& health() const { return health_; }
    const PbfdkfSettings& settings() const { return settings_; }
    // 1 - A^2 of the next block: the process noise's share of |W|^2 (see transitionGrowthBlocks).
    double processNoiseFactor() const;
    int blockSize() const { return block_; }
    int partitions() const { return partitions_; }

private:
    float processSample(float d, const float* x);
    // Taps, their spectra and the predicted echo to zero (reset, and divergence).
    void zeroWeights();
    // B samples into one half of the 2B-point window (the first, or the second), zeros in the other,
    // and the window's spectrum (bins_) into `spectrum`.
    void transformHalfWindow(const float* samples, bool secondHalf, std::span<std::complex<float>> spectrum);
    void updateBlock();
    void adaptBlock();
    // The earlier blocks' contribution to each sample of the block about to start (pastEcho_).
    void predictPastEcho();

    PbfdkfSettings settings_{};
    int block_ = 0, partitions_ = 0;
    std::size_t taps_ = 0, stride_ = 0, channels_ = 0, bins_ = 0;
    RealFftPlan<float> fft_{2};
    // Per channel the taps (stride_ apart), and the spectra of partition p's B taps (bins_ each).
    AlignedBuffer<float> w_;
    std::vector<std::complex<float>> weightSpectra_;
    // The block so far: the earlier blocks' echo at each of its samples, and per channel its far-end
    // samples newest last, B - 1 slots ahead of the first so a sample's taps read them backwards.
    std::vector<float> pastEcho_, blockFarEnd_;
    std::vector<float> weights_;                  // the taps as weights() shows them (no padding)
    // The current block: far-end samples per channel (the previous block before them) and errors.
    std::vector<float> window_, error_;
    int filled_ = 0;
    int pausedInBlock_ = 0;                       // samples of this block with adaptation off
    // Per channel and partition p, bins_ each: X_p (the far-end window p blocks ago) in a ring, Phi_p.
    // A real signal's transform: bins 0..B of the 2B-point DFT (the rest are their conjugates, and Phi,
    // a function of |X|^2 and |W|^2, is the same there).
    std::vector<std::complex<float>> spectra_;
    std::vector<float> uncertainty_;
    int newest_ = 0;                              // ring index of X_0
    std::vector<std::complex<float>> scratch_, errorSpectrum_;
    std::vector<std::complex<float>> lastBlockSpectrum_;   // the block just ended, then zeros (predictPastEcho)
    std::vector<float> timeScratch_;              // 2B samples: a window on its way in or out of the FFT
    std::vector<float> denominator_;
    std::vector<float> micBlock_;                 // the block's microphone samples (for Phi(0))
    bool uncertaintyPending_ = true;              // Phi waits for the far end's first active stretch
    // While pending: the consecutive active blocks' far-end and microphone energies, and their samples.
    double priorFarEnergy_ = 0.0, priorMicEnergy_ = 0.0;
    int priorSamples_ = 0;
    float uncertaintyCap_ = 0.0f;                 // Phi(0) of partition 0: no bin is ever less certain
    std::vector<double> priorProfile_;            // Phi(0) of partition p over partition 0's
    double priorSum_ = 1.0;                       // their sum
    bool adapting_ = true;
    bool weightsZero_ = true;                     // no step taken since the last zeroWeights()
    long adaptedBlocks_ = 0;                      // since the last restart (the process noise's schedule)
    RlsHealth health_{};
};

} // namespace quell::dsp
