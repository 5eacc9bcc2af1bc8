// SPDX-License-Identifier: GPL-3.0-or-later
#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "aec/LinearEchoFilter.h"
#include "aec/SegmentLeader.h"

namespace quell::aec {
namespace {

// A stereo far end on the CPU: up to four filters on the same samples, the one with the lowest error
// leading (SegmentLeader: its error is the output, its weights are the ones copied):
//  - the two-channel fast RLS (dsp::StereoFastRls, 2 x 4096 taps), where the plan gives it;
//  - the two-channel Kalman filter;
//  - a two-channel fast RLS of half the taps, where the plan gives it (with the first only);
//  - the mono fast RLS (with its shorter companions) on the channels' mean.
//
// Why the two-channel fast RLS: where the channels differ (two far-end talkers picked up by a spaced
// pair) exact least squares over the whole 256 ms learns the pair of paths far better than the Kalman
// filter. Physical corpus, CPU, --suppression 0, linear steady ERLE (Kalman filter and mean's RLS /
// with the two-channel fast RLS beside them): speech 16.3 / 26.2 dB, two mics 15.3 / 26.0, pink noise
// 35.0 / 40.8, speech under a near-end talker 12.0 / 22.4. With the suppressor, that double talk keeps
// the near end at 27.9 dB after the fit instead of 14.2 (Tests/eval/results/2026-11-29/cpu-stereo-ftf).
// It costs about 0.2 of a core here at 2 x 4096 taps; the whole filter about 0.33.
//
// Why the mean's filter: a stereo far end is often one voice in both channels: a mono call captured as a
// stereo loopback (quell-live, a GStreamer pipeline), a mono track on a stereo bus, a voice panned
// anywhere, a mono source on a DAW's stereo sidechain. Its echo is then one filter of the mean,
// which the fast RLS learns as it learns any mono far end, while a stereo filter faces a pair of paths
// the channels never tell apart. Measured (physical corpus, CPU defaults, the far end of four files
// copied into both channels): speech 26.7 dB steady ERLE with the Kalman filter alone against 29.3 for
// the same file as mono, pink noise 30.1 against 39.8, music 16.5 against 31.0. The mean's weights are
// the same filter on each channel at half the gain, so the foreground and the weights' readers see a
// stereo filter either way.
//
// Why the Kalman filter beside them: it takes the segments where it is ahead (speech under a near-end
// talker, steady ERLE 21.4 dB without it, 22.5 with it) for a few hundredths of a core, and it is the
// filter that runs where the budget has no room for the fast RLS filters.
//
// Why a two-channel fast RLS of half the taps beside them (where the plan has room: offline always): at a
// new far-end talker the pair of paths the old one left undetermined costs the long filter 6 to 9 dB of
// reduction for about 200 ms, and the shorter filter, with its automatic memory (half the long one's),
// is ahead in some of those segments. Physical corpus, CPU defaults, steady ERLE without / with it:
// speech 26.7 / 27.2 dB, two mics 26.0 / 27.9, speech under a near-end talker 22.5 / 22.8 (the near end
// after the fit 27.9 both), pink noise 40.7 / 40.6 reaching 20 dB in 0.40 / 0.25 s; one voice in both
// channels: speech 34.9 / 34.7, its double talk 33.2 / 33.1 (near end 40.7 both), pink noise 41.0 / 41.0.
// It costs about 0.11 of a core here (the whole filter 0.33 -> 0.45 of this machine's core in the eval).
// The memory was not tuned: at 0.99995 the speech files reached 29.1 and 28.7 dB, at 0.99993 26.8 and
// 28.4, at 0.9999 25.6 and 26.6 (one file's segments, not a trend).
class CpuStereoFilter final : public LinearEchoFilter {
public:
    CpuStereoFilter(const dsp::PbfdkfSettings& kalman, const dsp::RlsSettings& mean, const std::optional<dsp::RlsSettings>& stereo,
                    const std::optional<dsp::RlsSettings>& half)
        : lead_((stereo ? 3 : 2) + (stereo && half ? 1 : 0))
    {
        if (kalman.channels != 2 || mean.channels != 1 || mean.tapsPerChannel > kalman.taps
            || (stereo && (stereo->channels != 2 || stereo->tapsPerChannel != kalman.taps))
            || (half && (!stereo || half->channels != 2 || half->tapsPerChannel > kalman.taps)))
            throw std::invalid_argument("CpuStereoFilter: two far-end channels, the mean's filter no longer than theirs, the "
                                        "stereo RLS as long as the Kalman filter, the shorter one beside it no longer");
        // Filter 0 writes the output: the stereo RLS where it runs, else the Kalman filter.
        if (stereo)
            filters_.push_back(makeCpuRlsFilter(*stereo));
        filters_.push_back(makeCpuKalmanFilter(kalman));
        if (stereo && half) {
            half_ = filters_.size();
            filters_.push_back(makeCpuRlsFilter(*half));
        }
        filters_.push_back(makeCpuRlsFilter(mean));
        meanRef_.assign(SegmentLeader::kSegment, 0.0f);
        for (std::size_t k = 1; k < filters_.size(); ++k)
            errors_.emplace_back(SegmentLeader::kSegment, 0.0f);
    }
    void process(std::span<const float>, std::span<const float>, std::span<float>) override
    {
        throw std::logic_error("CpuStereoFilter::process: two far-end channels (processInterleaved)");
    }
    void processInterleaved(std::span<const float> mic, std::span<const float> ref, std::span<float> out) override
    {
        if (ref.size() != 2 * mic.size() || out.size() < mic.size())
            throw std::invalid_argument("CpuStereoFilter::processInterleaved: ref must hold two channels of mic's length");
        const std::size_t mean = filters_.size() - 1;
        for (std::size_t at = 0; at < mic.size();) {
            const std::size_t n = std::min(mic.size() - at, lead_.samplesToSegmentEnd());
            const auto d = mic.subspan(at, n);
            const auto x = ref.subspan(2 * at, 2 * n);
            for (std::size_t i = 0; i < n; ++i)
                meanRef_[i] = 0.5f * (x[2 * i] + x[2 * i + 1]);
            // Filter 0 last: out may alias mic.
            for (std::size_t k = 1; k < filters_.size(); ++k) {
                const std::span<float> e(errors_[k - 1].data(), n);
                if (k == mean)
                    filters_[k]->process(d, {meanRef_.data(), n}, e);
                else
                    filters_[k]->processInterleaved(d, x, e);
            }
            const std::span<float> e = out.subspan(at, n);
            filters_[0]->processInterleaved(d, x, e);
            lead_.add(0, e);
            for (std::size_t k = 1; k < filters_.size(); ++k)
                lead_.add(k, {errors_[k - 1].data(), n});
            if (lead_.leader() != 0)
                std::copy_n(errors_[lead_.leader() - 1].data(), n, e.begin());
            lead_.advance(n);
            at += n;
        }
    }
    void reset() override
    {
        for (auto& f : filters_)
            f->reset();
        lead_.reset();
    }
    int taps() const override { return filters_[0]->taps(); }
    int channels() const override { return 2; }
    std::vector<float> weights() const override
    {
        std::vector<float> w(2 * static_cast<std::size_t>(taps()));
        copyWeights(w);
        return w;
    }
    void copyWeights(std::span<float> out) const override
    {
        if (half_ != 0 && lead_.leader() == half_) {
            // Each channel's shorter filter at the start of that channel's taps (channel-major), zeros
            // after: its weights land in out's first 2 h (zeros beyond), then channel 1's move up to `full`.
            filters_[half_]->copyWeights(out);
            const std::size_t h = static_cast<std::size_t>(filters_[half_]->taps()), full = out.size() / 2;
            const auto at = [&](std::size_t i) { return out.begin() + static_cast<std::ptrdiff_t>(i); };
            std::copy_backward(at(h), at(2 * h), at(full + h));
            std::fill(at(h), at(full), 0.0f);
            return;
        }
        if (lead_.leader() + 1 < filters_.size()) {
            filters_[lead_.leader()]->copyWeights(out);
            return;
        }
        // echo = w * (x0 + x1) / 2: w / 2 on each channel (channel-major, as the stereo filters' weights).
        const std::size_t half = out.size() / 2;
        filters_.back()->copyWeights(out.first(half));
        for (std::size_t i = 0; i < half; ++i)
            out[half + i] = out[i] = 0.5f * out[i];
        if (out.size() > 2 * half)
            out[2 * half] = 0.0f;
    }
    void restartCovariance() override
    {
        for (auto& f : filters_)
            f->restartCovariance();
    }
    // The RLS filters take the level match's delta; the Kalman filter has no prior to match.
    bool setRestartDelta(double delta) override
    {
        bool taken = false;
        for (auto& f : filters_)
            taken = f->setRestartDelta(delta) || taken;
        return taken;
    }
    void setAdaptation(bool on) override
    {
        for (auto& f : filters_)
            f->setAdaptation(on);
    }
    dsp::RlsHealth health() const override
    {
        dsp::RlsHealth h = filters_[0]->health();
        for (std::size_t k = 1; k < filters_.size(); ++k)
            h.reinitialisations += filters_[k]->health().reinitialisations;
        return h;
    }
    std::string description() const override
    {
        // "A, beside it the B, the C and the channels' mean through the D".
        std::string d = filters_[0]->description() + ", beside it";
        for (std::size_t k = 1; k + 1 < filters_.size(); ++k)
            d += " the " + filters_[k]->description() + (k + 2 < filters_.size() ? "," : " and");
        return d + " the channels' mean through the " + filters_.back()->description();
    }
    bool onGpu() const override { return false; }

private:
    // [0] writes the output; the last runs on the channels' mean.
    std::vector<std::unique_ptr<LinearEchoFilter>> filters_;
    std::vector<float> meanRef_;                // one segment of the channels' mean
    std::vector<std::vector<float>> errors_;    // one segment of each other filter's error
    SegmentLeader lead_;
    std::size_t half_ = 0; // the shorter two-channel fast RLS's index, 0 where none runs
};

} // namespace

std::unique_ptr<LinearEchoFilter> makeCpuStereoFilter(const dsp::PbfdkfSettings& kalman, const dsp::RlsSettings& mean,
                                                      const std::optional<dsp::RlsSettings>& stereo,
                                                      const std::optional<dsp::RlsSettings>& half)
{
    return std::make_unique<CpuStereoFilter>(kalman, mean, stereo, half);
}

} // namespace quell::aec
