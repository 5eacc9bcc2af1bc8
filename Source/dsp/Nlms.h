// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Normalised LMS adaptive filter: the cheap CPU echo canceller for when RLS of the configured length
// cannot run in real time. e(n) = d(n) - w^T u(n); w += mu e u / (u^T u + eps).
// Threading: one thread at a time; process() never allocates after prepare().
#include <cstddef>
#include <span>

#include "dsp/AlignedBuffer.h"

namespace quell::dsp {

struct NlmsSettings {
    int taps = 1024;
    double stepSize = 0.5;   // mu, in (0, 2)
    double epsilon = 1e-6;   // regularisation of the normalisation
};

template <typename T>
class Nlms {
public:
    void prepare(const NlmsSettings& settings);
    void reset();
    void process(std::span<const T> mic, std::span<const T> ref, std::span<T> out);
    std::span<const T> weights() const { return {w_.data(), static_cast<std::size_t>(settings_.taps)}; }
    // Off: the weights stay as they are (as dsp::Rls::setAdaptation).
    void setAdaptation(bool on) { adapting_ = on; }

private:
    NlmsSettings settings_{};
    std::size_t stride_ = 0;
    AlignedBuffer<T> w_, u_;
    double uEnergy_ = 0.0;
    int sinceResum_ = 0;
    bool adapting_ = true;
};

extern template class Nlms<float>;
extern template class Nlms<double>;

} // namespace quell::dsp
