// SPDX-License-Identifier: GPL-3.0-or-later
// Peer: SpeexDSP's echo canceller (MDF), optionally followed by its preprocessor's residual echo
// suppression. Built only when pkg-config finds speexdsp (QUELL_EVAL_HAVE_SPEEX).
#include "eval/EvalCanceller.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#ifdef QUELL_EVAL_HAVE_SPEEX
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
#endif

namespace quell::eval {

#ifdef QUELL_EVAL_HAVE_SPEEX
namespace {

// 10 ms frames; a 256 ms filter (Speex's usual sizing: a quarter to a third of a second), long enough for
// the corpus's bulk delays up to 200 ms in the short corpus (Speex has no separate delay estimator).
constexpr double kFrameSeconds = 0.010;
constexpr double kTailSeconds = 0.256;

spx_int16_t toPcm(float v) { return static_cast<spx_int16_t>(std::clamp(std::lround(v * 32768.0f), -32768L, 32767L)); }

class SpeexCanceller final : public EvalCanceller {
public:
    explicit SpeexCanceller(bool res) : res_(res) {}
    std::string name() const override { return res_ ? "speex+res" : "speex"; }
    std::string description() const override
    {
        return res_ ? "SpeexDSP MDF echo canceller, 256 ms filter, + speex_preprocess (echo state set: residual "
                      "echo and noise suppression, defaults)"
                    : "SpeexDSP MDF echo canceller, 256 ms filter, 10 ms frames, 16-bit I/O";
    }

    std::vector<float> run(const std::vector<float>& mic, const std::vector<std::vector<float>>& ref,
                           int sampleRate) override
    {
        const int frame = static_cast<int>(std::lround(kFrameSeconds * sampleRate));
        const int tail = static_cast<int>(std::lround(kTailSeconds * sampleRate));
        const std::vector<float> x = downmix(ref);
        SpeexEchoState* echo = speex_echo_state_init(frame, tail);
        int rate = sampleRate;
        speex_echo_ctl(echo, SPEEX_ECHO_SET_SAMPLING_RATE, &rate);
        SpeexPreprocessState* pp = nullptr;
        if (res_) {
            pp = speex_preprocess_state_init(frame, sampleRate);
            speex_preprocess_ctl(pp, SPEEX_PREPROCESS_SET_ECHO_STATE, echo);
        }
        std::vector<spx_int16_t> m(frame), r(frame), e(frame);
        std::vector<float> out(mic.size(), 0.0f);
        for (std::size_t pos = 0; pos + frame <= mic.size(); pos += frame) {
            for (int i = 0; i < frame; ++i) {
                m[i] = toPcm(mic[pos + i]);
                r[i] = toPcm(x[pos + i]);
            }
            speex_echo_cancellation(echo, m.data(), r.data(), e.data());
            if (pp)
                speex_preprocess_run(pp, e.data());
            for (int i = 0; i < frame; ++i)
                out[pos + i] = e[i] / 32768.0f;
        }
        if (pp)
            speex_preprocess_state_destroy(pp);
        speex_echo_state_destroy(echo);
        return out;
    }

    // The MDF canceller removes DC from its microphone with a notch (radius 0.982 at 16 to 24 kHz, 0.9
    // below, 0.992 above, as in SpeexDSP's mdf.c); its pre-emphasis and de-emphasis cancel on the near end.
    void frontEnd(std::vector<float>& signal, int sampleRate) const override
    {
        const double radius = sampleRate < 12000 ? 0.9 : sampleRate < 24000 ? 0.982 : 0.992;
        const double den2 = radius * radius + 0.7 * (1.0 - radius) * (1.0 - radius);
        double mem0 = 0.0, mem1 = 0.0;
        for (float& v : signal) {
            const double in = v;
            const double vout = mem0 + in;
            mem0 = mem1 + 2.0 * (-in + radius * vout);
            mem1 = in - den2 * vout;
            v = static_cast<float>(radius * vout);
        }
    }

private:
    bool res_;
};

} // namespace

std::unique_ptr<EvalCanceller> makeSpeexCanceller(bool residualSuppression, std::string&)
{
    return std::make_unique<SpeexCanceller>(residualSuppression);
}
#else
std::unique_ptr<EvalCanceller> makeSpeexCanceller(bool, std::string& whyNot)
{
    whyNot = "SpeexDSP not found by pkg-config at build time (Debian: libspeexdsp-dev)";
    return nullptr;
}
#endif

} // namespace quell::eval
