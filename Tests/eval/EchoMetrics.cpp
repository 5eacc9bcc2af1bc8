#include "eval/EchoMetrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "dsp/BiquadCascade.h"

namespace quell::eval {
namespace {

double db(double num, double den) { return 10.0 * std::log10(std::max(num, 1e-30) / std::max(den, 1e-30)); }

bool inside(const Intervals& iv, double t)
{
    return std::any_of(iv.begin(), iv.end(), [&](const auto& p) { return t >= p.first && t < p.second; });
}

bool overlaps(const Intervals& iv, double a, double b)
{
    return std::any_of(iv.begin(), iv.end(), [&](const auto& p) { return p.first < b && a < p.second; });
}

// 4th-order high-pass (two 2nd-order Butterworth sections) at `hz`, applied in float64.
std::vector<double> highPass(const std::vector<float>& x, double hz, int rate)
{
    const dsp::Biquad hp = dsp::butterworthHighPass(hz, rate);
    const dsp::Biquad two[2] = {hp, hp};
    dsp::BiquadCascade<double> f;
    f.prepare(two);
    std::vector<double> y(x.begin(), x.end());
    f.process(y, y);
    return y;
}

// Start time of the first run of `len` consecutive frames (in the given order) at or above `target`.
std::optional<double> firstRun(const std::vector<std::pair<double, double>>& frames, double target, int len)
{
    int run = 0;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        run = frames[i].second >= target ? run + 1 : 0;
        if (run == len)
            return frames[i + 1 - len].first;
    }
    return std::nullopt;
}

} // namespace

std::string formatFigure(const std::optional<double>& value, int precision)
{
    if (!value)
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", precision, *value);
    return buf;
}

EchoFigures measure(const CorpusScenario& s, const std::vector<float>& out, const std::vector<float>& near,
                    const std::vector<float>& echo, const std::vector<float>& noise, const MetricSettings& ms)
{
    EchoFigures f;
    const int rate = s.sampleRate;
    const std::size_t n = std::min(out.size(), s.mic.size());

    if (!s.echoActive.empty()) {
        const std::size_t len = static_cast<std::size_t>(std::lround(ms.frameSeconds * rate));
        struct Frame { double t, echo, res, mic, out; };
        std::vector<Frame> frames;
        double loudest = 0.0;
        for (std::size_t p = 0; p + len <= n; p += len) {
            Frame fr{static_cast<double>(p) / rate, 0, 0, 0, 0};
            for (std::size_t i = p; i < p + len; ++i) {
                const double r = double(out[i]) - near[i] - noise[i];
                fr.echo += double(echo[i]) * echo[i];
                fr.res += r * r;
                fr.mic += double(s.mic[i]) * s.mic[i];
                fr.out += double(out[i]) * out[i];
            }
            loudest = std::max(loudest, fr.echo);
            frames.push_back(fr);
        }
        const double t0 = s.echoActive.front().first;
        const double change = s.pathChangeSeconds.value_or(1e30);
        std::vector<std::pair<double, double>> before, after;   // (time, ERLE) of single-talk frames
        double sumEcho = 0, sumRes = 0, sumMic = 0, sumOut = 0;
        for (const Frame& fr : frames) {
            const double a = fr.t, b = fr.t + ms.frameSeconds;
            if (!inside(s.echoActive, a + 0.5 * ms.frameSeconds) || overlaps(s.nearActive, a, b)
                || fr.echo < loudest * 1e-3)
                continue;
            const double erle = db(fr.echo, fr.res);
            (b <= change ? before : after).emplace_back(a, erle);
            f.erleTrace.emplace_back(a, erle);
            const bool warm = a >= t0 + ms.warmupSeconds && !(b > change && a < change + ms.warmupSeconds);
            if (warm) {
                sumEcho += fr.echo;
                sumRes += fr.res;
                sumMic += fr.mic;
                sumOut += fr.out;
                f.minErleDb = std::min(f.minErleDb.value_or(1e9), erle);
            }
        }
        if (sumEcho > 0) {
            f.steadyErleDb = db(sumEcho, sumRes);
            f.steadyMicOverOutDb = db(sumMic, sumOut);
        }
        if (auto t = firstRun(before, 10.0, ms.runLength))
            f.timeTo10dB = *t - t0;
        if (auto t = firstRun(before, 20.0, ms.runLength))
            f.timeTo20dB = *t - t0;
        if (s.pathChangeSeconds)
            if (auto t = firstRun(after, 20.0, ms.runLength))
                f.reconvergeTo20dB = std::max(0.0, *t - change);
    }

    // Near-end preservation, above snrHighPassHz.
    if (!s.doubleTalk.empty() || s.nearEndOnly()) {
        const auto nearHp = highPass(near, ms.snrHighPassHz, rate);
        const auto outHp = highPass(out, ms.snrHighPassHz, rate);
        const Intervals& where = s.nearEndOnly() ? s.nearActive : s.doubleTalk;
        double pn = 0, pe = 0;
        for (std::size_t i = 0; i < n; ++i) {
            if (!inside(where, static_cast<double>(i) / rate))
                continue;
            pn += nearHp[i] * nearHp[i];
            pe += (outHp[i] - nearHp[i]) * (outHp[i] - nearHp[i]);
        }
        const double outSnr = db(pn, pe);
        if (s.nearEndOnly()) {
            std::vector<float> unprocessed(n);
            for (std::size_t i = 0; i < n; ++i)
                unprocessed[i] = near[i] + noise[i] + echo[i];
            const auto inHp = highPass(unprocessed, ms.snrHighPassHz, rate);
            double pi = 0;
            for (std::size_t i = 0; i < n; ++i)
                if (inside(where, static_cast<double>(i) / rate))
                    pi += (inHp[i] - nearHp[i]) * (inHp[i] - nearHp[i]);
            f.nearAloneLossDb = db(pn, pi) - outSnr;
        } else {
            f.doubleTalkSnrDb = outSnr;
        }
    }
    return f;
}

} // namespace quell::eval
