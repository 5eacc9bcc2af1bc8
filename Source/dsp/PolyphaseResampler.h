// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Rational polyphase resampler: output rate = input rate * L / M, with a Kaiser-windowed sinc low-pass
// prototype.  Its group delay is constant and reported, so callers can align signals exactly.
// Threading: one thread at a time; process() never allocates after prepare().
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace quell::dsp {

struct ResamplerDesign {
    // Pass band edge as a fraction of the lower of the two Nyquist frequencies.
    double rolloff = 0.9;
    // Half-length of the prototype, in periods of the lower of the two rates: sets the transition width.
    int zeroCrossings = 16;
    // Kaiser beta: about 80 dB of stop-band attenuation.
    double kaiserBeta = 8.0;
};

// The prototype filter for interpolation by L and decimation by M, gain L, odd length, centred.
std::vector<double> designResamplerPrototype(int upFactor, int downFactor, const ResamplerDesign& design);

template <typename T>
class PolyphaseResampler {
public:
    // Rates in Hz, integers (44100, 48000, 16000, ...). Throws std::invalid_argument on bad rates.
    void prepare(int inputRate, int outputRate, const ResamplerDesign& design = {});
    void reset();

    // Consumes all of `in`, writes the outputs that became due, returns how many.
    // `out` must hold at least maxOutput(in.size()) samples.
    std::size_t process(std::span<const T> in, std::span<T> out);

    std::size_t maxOutput(std::size_t inputCount) const
    {
        const auto up = static_cast<std::uint64_t>(up_), down = static_cast<std::uint64_t>(down_);
        return static_cast<std::size_t>((static_cast<std::uint64_t>(inputCount) * up + down - 1) / down) + 1;
    }
    // Group delay in output samples (may be fractional, e.g. 44.1 kHz <-> 16 kHz).
    double delayInOutputSamples() const { return centre_ / down_; }
    double delayInInputSamples() const { return centre_ / up_; }
    int upFactor() const { return up_; }
    int downFactor() const { return down_; }

private:
    int up_ = 1, down_ = 1;
    std::size_t phaseLength_ = 0;
    double centre_ = 0.0;
    std::vector<T> phases_;   // up_ rows of phaseLength_ taps, each row reversed for a forward dot product
    std::vector<T> line_;     // 2 * phaseLength_, newest phaseLength_ inputs contiguous
    std::size_t pos_ = 0;
    std::uint64_t inputCount_ = 0;   // inputs consumed so far
    std::uint64_t nextOutputT_ = 0;  // index of the next output on the upsampled grid
};

// A whole signal from inputRate to outputRate at once (offline: test material, corpora): the filter is
// flushed with zeros so the end comes out, and its group delay is dropped, so output sample k lines up
// with input time k / outputRate. Its length is about in.size() x outputRate / inputRate (the flush may
// add a sample or two past that).
template <typename T>
std::vector<T> resampleWhole(std::span<const T> in, int inputRate, int outputRate);

extern template class PolyphaseResampler<float>;
extern template class PolyphaseResampler<double>;
extern template std::vector<float> resampleWhole<float>(std::span<const float>, int, int);
extern template std::vector<double> resampleWhole<double>(std::span<const double>, int, int);

} // namespace quell::dsp
