// SPDX-License-Identifier: GPL-3.0-or-later
// Peer: WebRTC audio processing 0.3 (Debian libwebrtc-audio-processing), its AEC ("echo_cancellation()",
// the AEC2 era) with the extended filter and delay-agnostic mode (the corpus's delays are unknown to it),
// no high-pass, noise suppression or gain control. Built only when pkg-config finds it
// (QUELL_EVAL_HAVE_WEBRTC).
#include "eval/EvalCanceller.h"

#include <cmath>
#include <stdexcept>

#ifdef QUELL_EVAL_HAVE_WEBRTC
#include <webrtc/modules/audio_processing/include/audio_processing.h>
#endif

namespace quell::eval {

#ifdef QUELL_EVAL_HAVE_WEBRTC
namespace {

class WebRtcCanceller final : public EvalCanceller {
public:
    std::string name() const override { return "webrtc"; }
    std::string description() const override
    {
        return "WebRTC audio processing 0.3 AEC, high suppression, extended filter, delay-agnostic, 10 ms frames";
    }

    std::vector<float> run(const std::vector<float>& mic, const std::vector<std::vector<float>>& ref,
                           int sampleRate) override
    {
        webrtc::Config config;
        config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
        config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
        std::unique_ptr<webrtc::AudioProcessing> apm(webrtc::AudioProcessing::Create(config));
        if (!apm)
            throw std::runtime_error("webrtc::AudioProcessing::Create failed");
        apm->high_pass_filter()->Enable(false);
        apm->noise_suppression()->Enable(false);
        apm->gain_control()->Enable(false);
        apm->echo_cancellation()->enable_drift_compensation(false);
        apm->echo_cancellation()->set_suppression_level(webrtc::EchoCancellation::kHighSuppression);
        if (apm->echo_cancellation()->Enable(true) != 0)
            throw std::runtime_error("webrtc: cannot enable echo_cancellation()");

        const std::size_t frame = static_cast<std::size_t>(sampleRate / 100);
        const std::vector<float> x = downmix(ref);
        std::vector<float> out(mic.size(), 0.0f), r(frame), m(frame);
        for (std::size_t pos = 0; pos + frame <= mic.size(); pos += frame) {
            std::copy_n(x.begin() + pos, frame, r.begin());
            std::copy_n(mic.begin() + pos, frame, m.begin());
            const float* rp = r.data();
            if (apm->AnalyzeReverseStream(&rp, frame, sampleRate, webrtc::AudioProcessing::kMono) != 0)
                throw std::runtime_error("webrtc: AnalyzeReverseStream failed");
            apm->set_stream_delay_ms(0);
            const float* mp = m.data();
            float* op = out.data() + pos;
            if (apm->ProcessStream(&mp, frame, sampleRate, webrtc::AudioProcessing::kMono, sampleRate,
                                   webrtc::AudioProcessing::kMono, &op) != 0)
                throw std::runtime_error("webrtc: ProcessStream failed");
        }
        return out;
    }
};

} // namespace

std::unique_ptr<EvalCanceller> makeWebRtcCanceller(std::string&)
{
    return std::make_unique<WebRtcCanceller>();
}
#else
std::unique_ptr<EvalCanceller> makeWebRtcCanceller(std::string& whyNot)
{
    whyNot = "WebRTC audio processing not found by pkg-config at build time (Debian: libwebrtc-audio-processing-dev)";
    return nullptr;
}
#endif

} // namespace quell::eval
