// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/SegmentLeader.h"

#include <algorithm>

namespace quell::aec {

void SegmentLeader::add(std::size_t k, std::span<const float> error)
{
    double sum = 0.0;
    for (const float e : error)
        sum += double(e) * e;
    energy_[k] += sum;
}

bool SegmentLeader::advance(std::size_t samples)
{
    inSegment_ += samples;
    if (inSegment_ < kSegment)
        return false;
    std::size_t best = leader_;
    for (std::size_t k = 0; k < energy_.size(); ++k)
        if (energy_[k] < energy_[best])
            best = k;
    if (best != leader_ && energy_[best] < kTakeOverBelow * energy_[leader_])
        leader_ = best;
    std::fill(energy_.begin(), energy_.end(), 0.0);
    inSegment_ = 0;
    return true;
}

void SegmentLeader::reset()
{
    std::fill(energy_.begin(), energy_.end(), 0.0);
    leader_ = inSegment_ = 0;
}

} // namespace quell::aec
