// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Signal helpers for the echo-cancellation corpus: noise excitations, the loudspeaker's nonlinearity,
// the bulk delay, an echo path that changes at a given time, level setting at a given ratio, and the
// activity intervals written to the manifest.
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace quell::corpus {

std::vector<double> whiteNoise(std::size_t n, std::uint32_t seed);

// Gaussian noise with a 1/f power spectrum (-3 dB per octave) above `cornerHz` and flat below it, so a
// long file does not wander at sub-audio frequencies. Shaped in the frequency domain: exact slope over
// the whole band, unit RMS.
std::vector<double> pinkNoise(std::size_t n, std::uint32_t seed, double sampleRate, double cornerHz = 20.0);

double meanPower(std::span<const double> x);
double rms(std::span<const double> x);
double powerDb(double power); // 10 log10, -inf for 0

// Mean power over the "active" 20 ms frames only: those within `rangeDb` of the loudest frame. For
// stationary noise that is the mean power; for speech it leaves the pauses out, as level meters for
// speech do (the spirit of ITU-T P.56's active level, not its exact algorithm).
double activePower(std::span<const double> x, double sampleRate, double rangeDb = 40.0);

// The gain g such that  10 log10( activePower(reference) / activePower(g * signal) ) == ratioDb.
// Used for the echo-to-noise ratio (reference = echo, signal = noise) and the near-to-echo ratio.
// Throws std::invalid_argument if either signal is silent.
double gainForRatioDb(std::span<const double> signal, std::span<const double> reference, double ratioDb,
                      double sampleRate);

void scale(std::span<double> x, double gain);

// x band-limited to [lowHz, highHz] in the frequency domain (raised-cosine edges `edgeHz` wide), as a
// narrowband telephone far end upsampled to a wideband rate: nothing outside the band.
std::vector<double> bandLimited(std::span<const double> x, double sampleRate, double lowHz, double highHz,
                                double edgeHz = 100.0);

// Music without highs, synthesised: a bass line, sustained chords (organ-like: held at one level) and a
// melody of struck notes (piano-like: a fast attack and an exponential decay), each note a harmonic
// tone, the whole band-limited to 40 Hz - 5 kHz. What it stresses: a far end of a few spectral lines at
// a time, held for up to two seconds, and nothing above 5 kHz, so that an RLS's covariance sees no
// excitation in most directions for seconds (issue 12's "music without highs must not wind P up").
// Deterministic for a seed; unit RMS.
std::vector<double> musicWithoutHighs(std::size_t n, double sampleRate, std::uint32_t seed);

// Stationary noise with the long-term power spectrum of `speech` (its spectrum with random phases), unit RMS.
std::vector<double> speechShapedNoise(std::span<const double> speech, std::size_t n, std::uint32_t seed);

// A small device's playback chain, as real hands-free devices make echo that no linear filter models: a
// fast compressor (gain that follows the signal), a hard clipper, an asymmetric loudspeaker
// nonlinearity with a small speaker's band limits, a rattle (rectified signal through a resonance) and
// an acoustic delay that wanders by a fraction of a millisecond (the enclosure and mounting move). The
// echo it makes is only weakly coherent with x.
std::vector<double> deviceChain(std::span<const double> x, double sampleRate, std::uint32_t seed);

// Memoryless soft clipper, a mild loudspeaker overload: y = tanh(drive x) / drive. Unity small-signal gain;
// drive -> 0 is linear.
std::vector<double> softClip(std::span<const double> x, double drive);

// Signal-to-distortion ratio of y against x in dB: the best scalar fit a x of y is the linear part,
// y - a x the distortion.
double signalToDistortionDb(std::span<const double> x, std::span<const double> y);

// The softClip drive that gives a target signal-to-distortion ratio on x (bisection; monotone in drive).
double driveForDistortion(std::span<const double> x, double targetDb);

// x delayed by `samples` (zeros in front), same length as x.
std::vector<double> delayed(std::span<const double> x, std::size_t samples);

// Echo through a path that changes at `switchSample`: (x * before)[n] for n < switchSample,
// (x * after)[n] from then on (the whole path switches at once, as when the device or a person moves).
std::vector<double> switchedConvolution(std::span<const double> x, std::span<const double> before,
                                        std::span<const double> after, std::size_t switchSample);

// Intervals [start, end) in seconds where x is active (20 ms frames within `rangeDb` of the loudest
// frame), gaps shorter than `bridgeSeconds` merged.
using Interval = std::pair<double, double>;
std::vector<Interval> activityIntervals(std::span<const double> x, double sampleRate, double rangeDb = 40.0,
                                        double bridgeSeconds = 0.1);
std::vector<Interval> intersect(const std::vector<Interval>& a, const std::vector<Interval>& b);

// The first `samples` samples of h, the last `fadeSamples` of them under a raised-cosine fade-out
// (a hard cut would add a click to the response's spectrum).
std::vector<double> truncateWithFade(std::span<const double> h, std::size_t samples, std::size_t fadeSamples);

// Rounds to the 16-bit PCM grid (k / 32768), so that components written as 16-bit PCM add up to the
// mixture exactly after reading back.
void quantizeToPcm16(std::span<double> x);

} // namespace quell::corpus
