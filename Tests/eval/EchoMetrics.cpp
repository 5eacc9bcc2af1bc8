// SPDX-License-Identifier: GPL-3.0-or-later
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

// Solves the symmetric positive (semi-)definite system a x = b in place (Cholesky, with a ridge of 1e-9
// of the mean diagonal so a silent reference still gives an answer); a is n x n, row-major.
std::vector<double> solveSpd(std::vector<double> a, std::vector<double> b, std::size_t n)
{
    double trace = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        trace += a[i * n + i];
    const double ridge = 1e-9 * std::max(trace / static_cast<double>(n), 1e-300);
    for (std::size_t i = 0; i < n; ++i)
        a[i * n + i] += ridge;
    for (std::size_t j = 0; j < n; ++j) {
        double d = a[j * n + j];
        for (std::size_t k = 0; k < j; ++k)
            d -= a[j * n + k] * a[j * n + k];
        d = std::sqrt(std::max(d, 1e-300));
        a[j * n + j] = d;
        for (std::size_t i = j + 1; i < n; ++i) {
            double v = a[i * n + j];
            for (std::size_t k = 0; k < j; ++k)
                v -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = v / d;
        }
    }
    for (std::size_t i = 0; i < n; ++i) { // L y = b
        for (std::size_t k = 0; k < i; ++k)
            b[i] -= a[i * n + k] * b[k];
        b[i] /= a[i * n + i];
    }
    for (std::size_t i = n; i-- > 0;) { // L^T x = y
        for (std::size_t k = i + 1; k < n; ++k)
            b[i] -= a[k * n + i] * b[k];
        b[i] /= a[i * n + i];
    }
    return b;
}

// The near-end SNR after a linear fit (EchoFigures::nearSnrFitDb) of `out` against `reference` over the
// samples inside `where`.
std::optional<double> snrAfterFit(const std::vector<double>& reference, const std::vector<double>& out,
                                  const Intervals& where, int rate, int taps)
{
    const std::size_t T = static_cast<std::size_t>(taps), n = std::min(reference.size(), out.size());
    const std::size_t half = T / 2;
    if (n <= T)
        return std::nullopt;
    std::vector<double> a(T * T, 0.0), b(T, 0.0), x(T);
    std::vector<std::size_t> used;
    for (std::size_t i = half; i + T - half <= n; ++i) {
        if (!inside(where, static_cast<double>(i) / rate))
            continue;
        used.push_back(i);
        // x[k] = reference(i + half - k): lags -half .. T - half - 1.
        for (std::size_t k = 0; k < T; ++k)
            x[k] = reference[i + half - k];
        for (std::size_t r = 0; r < T; ++r) {
            const double xr = x[r];
            for (std::size_t c = r; c < T; ++c)
                a[r * T + c] += xr * x[c];
            b[r] += xr * out[i];
        }
    }
    if (used.empty())
        return std::nullopt;
    for (std::size_t r = 0; r < T; ++r)
        for (std::size_t c = 0; c < r; ++c)
            a[r * T + c] = a[c * T + r];
    const std::vector<double> h = solveSpd(a, b, T);
    double fit = 0.0, err = 0.0;
    for (const std::size_t i : used) {
        double f = 0.0;
        for (std::size_t k = 0; k < T; ++k)
            f += h[k] * reference[i + half - k];
        fit += f * f;
        err += (out[i] - f) * (out[i] - f);
    }
    return db(fit, err);
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

    // Near-end SNR after a linear fit, wherever the near end talks.
    if (!s.nearActive.empty()) {
        std::vector<float> clean(n);
        for (std::size_t i = 0; i < n; ++i)
            clean[i] = near[i] + noise[i];
        f.nearSnrFitDb = snrAfterFit(highPass(clean, ms.snrHighPassHz, rate), highPass(out, ms.snrHighPassHz, rate),
                                     s.nearActive, rate, ms.fitTaps);
    }

    // The loudest output frame against the microphone's.
    {
        const std::size_t len = static_cast<std::size_t>(std::lround(ms.loudFrameSeconds * rate));
        const double change = s.pathChangeSeconds.value_or(-1e30);
        for (std::size_t p = static_cast<std::size_t>(std::lround(ms.loudSkipSeconds * rate)); p + len <= n; p += len) {
            double pm = 0.0, po = 0.0;
            for (std::size_t i = p; i < p + len; ++i) {
                pm += double(s.mic[i]) * s.mic[i];
                po += double(out[i]) * out[i];
            }
            const double t = static_cast<double>(p) / rate, ratio = db(po, pm);
            if (t + ms.loudFrameSeconds > change && t < change + ms.changeGraceSeconds) {
                f.loudestAfterChangeDb = std::max(f.loudestAfterChangeDb.value_or(-1e9), ratio);
            } else if (!f.loudestFrameDb || ratio > *f.loudestFrameDb) {
                f.loudestFrameDb = ratio;
                f.loudestFrameSeconds = t;
            }
        }
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
