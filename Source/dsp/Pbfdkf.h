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
// the time-domain filter (the partitions' taps, kept beside their spectra) on the regressor of that
// sample, as the block algorithm defines it (the weights change only at block ends), so any split of
// the input into calls gives the same samples. Several far-end channels are one state: their
// partitions share the denominator (a stereo pair's echo paths learnt together, as dsp::Rls does).
//
// Threading: one thread at a time; process() never allocates after prepare().
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

#include "dsp/AlignedBuffer.h"
#include "dsp/Fft.h"
#include "dsp/RlsSettings.h"

namespace quell::dsp {

struct PbfdkfSettings {
    int taps = 4096;                  // per far-end channel (1..65536)
    int channels = 1;                 // far-end channels (1..8)
    int blockSize = 0;                // B, a power of two from 16 to 4096; 0 = automatic (automaticBlockSize)
    double transition = 0.999;        // A in (0, 1): how fast the echo path is believed to drift per block
    // ... at first. The process noise (1 - A^2)|W|^2 then shrinks as the filter learns, by 1 / (1 + k /
    // transitionGrowthBlocks) after k adapted blocks since the last restart, down to that of
    // finalTransition: a memory that grows from a restart, as the RLS's growing window does before its
    // forgetting factor takes over. A fixed A trades convergence for depth: alone on the corpus's speech in
    // a 0.2 s room, 0.999 reaches 27 dB and stays there for 60 s, 0.9999 reaches 31 dB after 20 s but is
    // 5 dB behind for the first 10 s; and in double talk, where the near end drives the weights, a larger
    // process noise keeps more of the near end's pull. Measured in the canceller (physical corpus, 4096
    // taps, 2 s = 250 blocks at 16 kHz; mean steady ERLE of the 5 speech rooms / mean near-end SNR after the
    // fit of the 9 double-talk files): fixed 26.3 / 19.5 dB, 125 blocks 26.5 / 20.8, 250 blocks 26.9 /
    // 20.4, 500 blocks (the filter alone) 1 to 1.5 dB under 125 from 15 to 33 s. 0 = a fixed A.
    double transitionGrowthBlocks = 250.0;
    double finalTransition = 0.99999;
    // Phi(0), summed over the partitions = uncertaintyScale x (microphone energy / far-end energy), measured on the first
    // block with an active far end (corpus, physical rooms: 3 converges fastest; 1 and 0.3 lose 2 to 8 dB
    // in the first seconds of speech).
    double uncertaintyScale = 3.0;
    // Phi(0) across the partitions follows a room's decay: each partition starts this many dB per tap
    // less uncertain than the one before it, their sum still the scale above (0.0125 dB per tap: 60 dB
    // in 0.3 s at 16 kHz; 0 = the same for every partition). A flat prior spreads the first steps evenly
    // over a tail that holds little of the echo, and the gradient noise put there takes seconds of speech
    // to leave. Corpus, physical rooms, 4096 taps in the canceller at 16 kHz (36 files with far-end
    // echo): mean steady ERLE 25.0 dB flat, 25.8 / 26.1 / 25.6 at 120 / 200 / 300 dB per second; mean
    // near-end SNR after the fit in its 10 double-talk files 20.0, 21.2 / 21.9 / 21.0.
    double uncertaintyDecayDbPerTap = 0.0125;
};

// B for `taps`: about taps / 32, a power of two between 64 and 256 (16 to 64 partitions at 16 kHz).
int automaticBlockSize(int taps);

// Throws std::invalid_argument naming the bad value.
void validate(const PbfdkfSettings& settings);

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
    void updateBlock();

    PbfdkfSettings settings_{};
    int block_ = 0, partitions_ = 0;
    std::size_t taps_ = 0, stride_ = 0, channels_ = 0, bins_ = 0;
    FftPlan<float> fft_{1};
    // Time domain: per channel the regressor (newest first, stride_ long) and the taps it meets.
    AlignedBuffer<float> u_, w_;
    std::vector<float> weights_;                  // the taps as weights() shows them (no padding)
    // The current block: far-end samples per channel (the previous block before them) and errors.
    std::vector<float> window_, error_;
    int filled_ = 0;
    int pausedInBlock_ = 0;                       // samples of this block with adaptation off
    // Per channel and partition p, bins_ each: X_p (the far-end window p blocks ago) in a ring, Phi_p.
    std::vector<std::complex<float>> spectra_;
    std::vector<float> uncertainty_;
    int newest_ = 0;                              // ring index of X_0
    std::vector<std::complex<float>> scratch_, errorSpectrum_;
    std::vector<float> denominator_;
    std::vector<float> micBlock_;                 // the block's microphone samples (for Phi(0))
    bool uncertaintyPending_ = true;              // Phi waits for the first active far-end block
    float uncertaintyCap_ = 0.0f;                 // Phi(0) of partition 0: no bin is ever less certain
    std::vector<double> priorProfile_;            // Phi(0) of partition p over partition 0's
    double priorSum_ = 1.0;                       // their sum
    bool adapting_ = true;
    long adaptedBlocks_ = 0;                      // since the last restart (the process noise's schedule)
    RlsHealth health_{};
};

} // namespace quell::dsp
