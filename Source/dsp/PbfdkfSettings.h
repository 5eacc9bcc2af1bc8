// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Kalman filter's settings (dsp::Pbfdkf, and its batched GPU twin, whose CUDA side sees this header
// alone), the automatic block size and the settings' check.
#include <vector>

namespace quell::dsp {

struct PbfdkfSettings {
    int taps = 4096;                  // per far-end channel (1..65536)
    int channels = 1;                 // far-end channels (1..8)
    int blockSize = 0;                // B, a power of two from 16 to 4096; 0 = automatic (automaticBlockSize)
    double transition = 0.999;        // A in (0, 1): how fast the echo path is believed to drift per 128 samples
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
    // The step's denominator is |E|^2 + residualWeight x sum_p Phi_p |X_p|^2: the error the filter's own
    // uncertainty predicts, weighted. R/M = 0.5 is the textbook weight with E's expectation in place of
    // |E|^2; as |E|^2 already holds that residual, a larger weight makes a more cautious step, which
    // holds the weights still under near-end speech and noise. Measured in the canceller (physical
    // corpus, 4096 taps, 36 files with far-end echo / 10 double-talk files): weight 0.5 mean steady ERLE
    // 26.51 dB, near-end SNR after the fit 23.46; 0.75 26.75 / 24.68; 1.0 26.74 / 24.91; 1.5 26.88 /
    // 25.20; 2.0 26.64 / 24.84. At 1.5 the 10 dB ENR speech rooms gain 1.2 and 2.8 dB and the -6 dB
    // double talk 3.0 and 6.0 dB; the path change loses 1.7 dB (it re-learns more cautiously).
    double residualWeight = 1.5;
};

// B for `taps`: about taps / 32, a power of two between 64 and 256 (16 to 64 partitions at 16 kHz).
int automaticBlockSize(int taps);

// Phi(0) is measured on the far end's first active stretch of at least this many samples (consecutive
// active blocks: one block from B = 128 up). The microphone holds only the echo of the far end since the
// stretch began, so a shorter one under-measures the path: a white far end that starts from silence, in
// a 0.3 s room, at 1024 taps, reached 3.2 dB of steady ERLE in the canceller with B = 32 measured on one
// block, against 18.7 with B = 64 (physical corpus, --suppression 0).
inline constexpr int kPriorMeasureSamples = 128;

// transition and finalTransition are A over this many samples; a block of B samples takes the process
// noise 1 - A^2 times B / kTransitionSamples, so that the path is believed to drift as fast per second
// whatever the block (a fixed A per block drifts four times faster at B = 32 than at 128: at 4096 taps on
// white noise, 22.6 dB after 8 s against 29.0; scaled, 28.8).
inline constexpr int kTransitionSamples = 128;
// 1 - A^2 for a block of `block` samples.
inline double processNoisePerBlock(double transition, int block)
{
    const double noise = (1.0 - transition * transition) * static_cast<double>(block) / kTransitionSamples;
    return noise < 1.0 ? noise : 1.0;
}

// Phi(0) of each of `partitions` partitions of `block` taps over partition 0's (uncertaintyDecayDbPerTap).
std::vector<double> uncertaintyProfile(const PbfdkfSettings& settings, int block, int partitions);

// Throws std::invalid_argument naming the bad value.
void validate(const PbfdkfSettings& settings);

} // namespace quell::dsp
