// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/BandCoherence.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace quell::aec {
namespace {

// Average powers below this are silence (a float spectrum's bin of a signal at -300 dB re full scale).
// |S_ab|^2 <= S_aa S_bb: where either power is 0 the cross-spectrum is too.
constexpr double kTiny = 1e-30;

} // namespace

void BandCoherence::prepare(std::span<const std::size_t> bandOfBin, double framesPerSecond, double seconds)
{
    if (bandOfBin.empty() || !(framesPerSecond > 0.0) || !(seconds > 0.0) || !std::isfinite(seconds))
        throw std::invalid_argument("BandCoherence: bins, frame rate and time constant must be positive");
    const std::size_t bands = *std::max_element(bandOfBin.begin(), bandOfBin.end()) + 1;
    std::vector<bool> seen(bands, false);
    for (const std::size_t b : bandOfBin)
        seen[b] = true;
    if (std::find(seen.begin(), seen.end(), false) != seen.end())
        throw std::invalid_argument("BandCoherence: every band needs a bin");
    bandOf_.assign(bandOfBin.begin(), bandOfBin.end());
    cross_.assign(bandOf_.size(), {});
    powerA_.assign(bandOf_.size(), 0.0);
    powerB_.assign(bandOf_.size(), 0.0);
    crossSum_.assign(bands, 0.0);
    productSum_.assign(bands, 0.0);
    coherence_.assign(bands, 0.0);
    weight_ = std::min(1.0, 1.0 / (seconds * framesPerSecond));
    reset();
}

void BandCoherence::reset()
{
    std::fill(cross_.begin(), cross_.end(), std::complex<double>{});
    std::fill(powerA_.begin(), powerA_.end(), 0.0);
    std::fill(powerB_.begin(), powerB_.end(), 0.0);
    std::fill(coherence_.begin(), coherence_.end(), 0.0);
    meanCoherence_ = 0.0;
}

void BandCoherence::update(std::span<const std::complex<float>> a, std::span<const std::complex<float>> b)
{
    const std::size_t K = bandOf_.size();
    if (a.size() < K || b.size() < K)
        throw std::invalid_argument("BandCoherence::update: a spectrum shorter than the bins prepared");
    std::fill(crossSum_.begin(), crossSum_.end(), 0.0);
    std::fill(productSum_.begin(), productSum_.end(), 0.0);
    for (std::size_t k = 0; k < K; ++k) {
        const std::complex<double> x(a[k]), y(b[k]);
        cross_[k] += weight_ * (x * std::conj(y) - cross_[k]);
        powerA_[k] += weight_ * (std::norm(x) - powerA_[k]);
        powerB_[k] += weight_ * (std::norm(y) - powerB_[k]);
        // No denormals after long digital silence: the averages would decay into them and stay there
        // (weight_ times the smallest of them rounds to 0), every frame's arithmetic slow from then on.
        if (powerA_[k] < kTiny || powerB_[k] < kTiny) {
            powerA_[k] = powerA_[k] < kTiny ? 0.0 : powerA_[k];
            powerB_[k] = powerB_[k] < kTiny ? 0.0 : powerB_[k];
            cross_[k] = {};
        }
        crossSum_[bandOf_[k]] += std::norm(cross_[k]);
        productSum_[bandOf_[k]] += powerA_[k] * powerB_[k];
    }
    double sum = 0.0;
    for (std::size_t band = 0; band < coherence_.size(); ++band) {
        // Within rounding, |S_ab|^2 <= S_aa S_bb bin by bin (Cauchy-Schwarz holds for the averages too).
        coherence_[band] = productSum_[band] > 0.0 ? std::min(1.0, crossSum_[band] / productSum_[band]) : 0.0;
        sum += coherence_[band];
    }
    meanCoherence_ = sum / static_cast<double>(coherence_.size());
}

} // namespace quell::aec
