#include "aec/ForegroundEchoFilter.h"

#include <algorithm>
#include <stdexcept>

namespace quell::aec {

void ForegroundEchoFilter::prepare(const ForegroundSettings& s)
{
    if (s.taps <= 0 || s.channels <= 0 || s.taps % s.channels != 0 || s.segmentSamples <= 0 || s.copyAfterSegments <= 0
        || !(s.copyWhenBelow > 0.0))
        throw std::invalid_argument("ForegroundEchoFilter: bad settings");
    settings_ = s;
    w_.assign(static_cast<std::size_t>(s.taps), 0.0f);
    line_.assign(2 * static_cast<std::size_t>(s.taps), 0.0f);
    reset();
}

void ForegroundEchoFilter::reset()
{
    std::fill(w_.begin(), w_.end(), 0.0f);
    std::fill(line_.begin(), line_.end(), 0.0f);
    pos_ = 0;
    segFg_ = segBg_ = 0.0;
    inSegment_ = better_ = 0;
    copies_ = 0;
    restarted_ = false;
}

void ForegroundEchoFilter::copyFrom(const LinearEchoFilter& source)
{
    source.copyWeights(w_);
    ++copies_;
    restarted_ = false;
}

void ForegroundEchoFilter::process(std::span<const float> mic, std::span<const float> ref,
                                   std::span<const float> background, std::span<float> out,
                                   const LinearEchoFilter& source)
{
    const std::size_t channels = static_cast<std::size_t>(settings_.channels);
    if (ref.size() != mic.size() * channels || background.size() != mic.size() || out.size() < mic.size())
        throw std::invalid_argument("ForegroundEchoFilter::process: lengths differ");
    const std::size_t taps = w_.size() / channels;
    for (std::size_t n = 0; n < mic.size(); ++n) {
        // line_[c * 2 taps + pos_ + k] = x_c(n - k): newest first, as the RLS regressor u(n).
        pos_ = pos_ == 0 ? taps - 1 : pos_ - 1;
        float y = 0.0f;
        for (std::size_t c = 0; c < channels; ++c) {
            float* line = &line_[c * 2 * taps];
            line[pos_] = ref[n * channels + c];
            line[pos_ + taps] = ref[n * channels + c];
            const float* u = line + pos_;
            const float* w = &w_[c * taps];
            for (std::size_t k = 0; k < taps; ++k)
                y += w[k] * u[k];
        }
        const float d = mic[n], eb = background[n];
        const float ef = d - y;
        segFg_ += double(ef) * ef;
        segBg_ += double(eb) * eb;
        out[n] = ef;
        if (++inSegment_ == settings_.segmentSamples) {
            const double below = restarted_ ? settings_.copyAfterRestartBelow : settings_.copyWhenBelow;
            better_ = segBg_ < below * segFg_ ? better_ + 1 : 0;
            if (better_ >= settings_.copyAfterSegments && copying_) {
                copyFrom(source);
                better_ = 0;
            }
            segFg_ = segBg_ = 0.0;
            inSegment_ = 0;
        }
    }
}

} // namespace quell::aec
