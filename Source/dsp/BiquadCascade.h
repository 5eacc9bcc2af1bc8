// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A cascade of second-order sections (biquads), transposed direct form II, state carried across calls.
// Each section: y[n] = b0 x[n] + b1 x[n-1] + b2 x[n-2] - a1 y[n-1] - a2 y[n-2]  (a0 normalised to 1,
// the SciPy "sos" convention).
// Threading: one thread at a time; process() never allocates after prepare().
#include <array>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

namespace quell::dsp {

struct Biquad {
    double b0, b1, b2, a1, a2;
};

template <typename T>
class BiquadCascade {
public:
    void prepare(std::span<const Biquad> sections)
    {
        if (sections.empty())
            throw std::invalid_argument("BiquadCascade: at least one section is required");
        coeffs_.clear();
        for (const Biquad& s : sections)
            coeffs_.push_back({T(s.b0), T(s.b1), T(s.b2), T(s.a1), T(s.a2)});
        state_.assign(sections.size(), {T(0), T(0)});
    }

    void reset() { for (auto& s : state_) s = {T(0), T(0)}; }

    // in and out may alias.
    void process(std::span<const T> in, std::span<T> out)
    {
        if (out.size() < in.size())
            throw std::invalid_argument("BiquadCascade: output shorter than input");
        for (std::size_t n = 0; n < in.size(); ++n) {
            T x = in[n];
            for (std::size_t s = 0; s < coeffs_.size(); ++s) {
                const auto& c = coeffs_[s];
                auto& z = state_[s];
                const T y = c[0] * x + z[0];
                z[0] = c[1] * x - c[3] * y + z[1];
                z[1] = c[2] * x - c[4] * y;
                x = y;
            }
            out[n] = x;
        }
    }

    std::size_t sections() const { return coeffs_.size(); }

private:
    std::vector<std::array<T, 5>> coeffs_;
    std::vector<std::array<T, 2>> state_;
};

// A second-order Butterworth high-pass (bilinear transform), used to remove DC and rumble before the AEC.
Biquad butterworthHighPass(double cutoffHz, double sampleRate);

} // namespace quell::dsp
