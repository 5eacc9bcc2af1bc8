// SPDX-License-Identifier: GPL-3.0-or-later
#include "corpus/CorpusSignals.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string_view>

#include "corpus/FftConvolution.h"
#include "dsp/BiquadCascade.h"

namespace quell::corpus {
namespace {

std::size_t frameLength(double sampleRate) { return std::max<std::size_t>(1, static_cast<std::size_t>(0.02 * sampleRate)); }

// Per-frame mean power of x in 20 ms frames (the last frame may be shorter).
std::vector<double> framePowers(std::span<const double> x, double sampleRate)
{
    const std::size_t len = frameLength(sampleRate);
    std::vector<double> p;
    for (std::size_t start = 0; start < x.size(); start += len) {
        const std::size_t end = std::min(x.size(), start + len);
        p.push_back(meanPower(x.subspan(start, end - start)));
    }
    return p;
}

// x through a zero-phase filter of magnitude response gain(f) (whole-signal FFT, circular over a padding
// of at least the signal's length, so nothing wraps around audibly).
template <typename Gain>
std::vector<double> zeroPhaseFiltered(std::span<const double> x, double sampleRate, Gain gain)
{
    if (x.empty())
        return {};
    const std::size_t size = nextPowerOfTwo(2 * x.size());
    std::vector<std::complex<double>> spectrum(size, 0.0);
    std::copy(x.begin(), x.end(), spectrum.begin());
    fft(spectrum, false);
    for (std::size_t k = 0; k < size; ++k) {
        const std::size_t bin = std::min(k, size - k);
        spectrum[k] *= gain(static_cast<double>(bin) * sampleRate / static_cast<double>(size));
    }
    fft(spectrum, true);
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < y.size(); ++i)
        y[i] = spectrum[i].real();
    return y;
}

// Second-order sections from the audio EQ cookbook (bilinear transform), for causal device filters.
dsp::Biquad cookbook(const char* kind, double hz, double q, double sampleRate)
{
    const double w = 2.0 * std::numbers::pi * hz / sampleRate, cw = std::cos(w), alpha = std::sin(w) / (2.0 * q);
    double b0 = 0, b1 = 0, b2 = 0;
    if (std::string_view(kind) == "lowpass") {
        b0 = b2 = (1.0 - cw) / 2.0;
        b1 = 1.0 - cw;
    } else if (std::string_view(kind) == "highpass") {
        b0 = b2 = (1.0 + cw) / 2.0;
        b1 = -(1.0 + cw);
    } else { // band-pass, 0 dB peak
        b0 = alpha;
        b2 = -alpha;
    }
    const double a0 = 1.0 + alpha;
    return {b0 / a0, b1 / a0, b2 / a0, -2.0 * cw / a0, (1.0 - alpha) / a0};
}

std::vector<double> causalFiltered(std::span<const double> x, std::initializer_list<dsp::Biquad> sections)
{
    dsp::BiquadCascade<double> f;
    f.prepare(std::vector<dsp::Biquad>(sections));
    std::vector<double> y(x.begin(), x.end());
    f.process(y, y);
    return y;
}

// x read at a time-varying delay (samples, > 8): windowed-sinc interpolation, 16 taps.
std::vector<double> variablyDelayed(std::span<const double> x, const std::vector<double>& delay)
{
    std::vector<double> y(x.size(), 0.0);
    constexpr int half = 8;
    for (std::size_t n = 0; n < x.size(); ++n) {
        const double t = static_cast<double>(n) - delay[n];
        const double base = std::floor(t);
        const double frac = t - base;
        double acc = 0.0;
        for (int k = -half + 1; k <= half; ++k) {
            const long idx = static_cast<long>(base) + k;
            if (idx < 0 || idx >= static_cast<long>(x.size()))
                continue;
            const double arg = static_cast<double>(k) - frac;
            const double sinc = std::abs(arg) < 1e-12 ? 1.0 : std::sin(std::numbers::pi * arg) / (std::numbers::pi * arg);
            const double window = 0.5 + 0.5 * std::cos(std::numbers::pi * arg / half);
            acc += x[static_cast<std::size_t>(idx)] * sinc * window;
        }
        y[n] = acc;
    }
    return y;
}

} // namespace

std::vector<double> whiteNoise(std::size_t n, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> g(0.0, 1.0);
    std::vector<double> x(n);
    for (auto& v : x)
        v = g(rng);
    return x;
}

namespace {

// One harmonic tone added into `out` from `start` for `length` samples: harmonics below `topHz` at
// amplitudes 1 / h^1.2 (random phases, so chords do not all peak together), a 10 ms attack, then either
// held (decaySeconds <= 0) or decaying exponentially, and a 20 ms release at the end.
void addNote(std::vector<double>& out, std::size_t start, std::size_t length, double f0, double level,
             double decaySeconds, double sampleRate, double topHz, std::mt19937& rng)
{
    std::uniform_real_distribution<double> phase(0.0, 2.0 * std::numbers::pi);
    const std::size_t end = std::min(out.size(), start + length);
    const double attack = 0.01 * sampleRate, release = 0.02 * sampleRate;
    for (int h = 1; h * f0 < topHz; ++h) {
        const double a = level / std::pow(double(h), 1.2), w = 2.0 * std::numbers::pi * h * f0 / sampleRate;
        const double p0 = phase(rng);
        for (std::size_t i = start; i < end; ++i) {
            const double t = double(i - start), left = double(end - i);
            double env = std::min({1.0, t / attack, left / release});
            if (decaySeconds > 0.0)
                env *= std::exp(-t / (decaySeconds * sampleRate));
            out[i] += a * env * std::sin(w * t + p0);
        }
    }
}

} // namespace

std::vector<double> musicWithoutHighs(std::size_t n, double sampleRate, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<double> x(n, 0.0);
    // A C major scale over four octaves, as MIDI numbers; notes are drawn from it.
    const int major[] = {0, 2, 4, 5, 7, 9, 11};
    const auto hz = [](int midi) { return 440.0 * std::pow(2.0, (midi - 69) / 12.0); };
    const auto pick = [&](int lowOctave, int octaves) {
        const int degree = std::uniform_int_distribution<int>(0, 6)(rng);
        const int octave = lowOctave + std::uniform_int_distribution<int>(0, octaves - 1)(rng);
        return 12 * (octave + 1) + major[degree];
    };
    const double topHz = 5000.0;
    const auto beat = static_cast<std::size_t>(0.25 * sampleRate);   // 0.25 s
    // Bass and chords change every bar (2 s = 8 beats); the melody's notes last 1 to 4 beats.
    for (std::size_t at = 0, length = 8 * beat; at < n; at += length) {
        const int root = pick(2, 1);   // octave 2: 65 to 123 Hz
        addNote(x, at, length, hz(root), 0.8, 1.5, sampleRate, topHz, rng);
        for (const int interval : {0, 4, 7})   // the bar's major triad, held, two octaves up
            addNote(x, at, length, hz(root + 24 + interval), 0.3, 0.0, sampleRate, topHz, rng);
    }
    for (std::size_t at = 0; at < n;) {
        const auto length = std::uniform_int_distribution<std::size_t>(1, 4)(rng) * beat;
        addNote(x, at, length, hz(pick(4, 2)), 0.5, 0.4, sampleRate, topHz, rng);
        at += length;
    }
    x = bandLimited(x, sampleRate, 40.0, topHz);
    const double r = rms(x);
    if (r > 0.0)
        scale(x, 1.0 / r);
    return x;
}

std::vector<double> pinkNoise(std::size_t n, std::uint32_t seed, double sampleRate, double cornerHz)
{
    if (n == 0)
        return {};
    const std::size_t size = nextPowerOfTwo(n);
    const std::vector<double> w = whiteNoise(size, seed);
    std::vector<std::complex<double>> spectrum(w.begin(), w.end());
    fft(spectrum, false);
    spectrum[0] = 0.0;
    for (std::size_t k = 1; k < size; ++k) {
        const std::size_t bin = std::min(k, size - k); // mirror: keep the spectrum Hermitian
        const double f = std::max(cornerHz, static_cast<double>(bin) * sampleRate / static_cast<double>(size));
        spectrum[k] *= 1.0 / std::sqrt(f);
    }
    fft(spectrum, true);
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = spectrum[i].real();
    scale(x, 1.0 / rms(x));
    return x;
}

double meanPower(std::span<const double> x)
{
    if (x.empty())
        return 0.0;
    double acc = 0.0;
    for (const double v : x)
        acc += v * v;
    return acc / static_cast<double>(x.size());
}

double rms(std::span<const double> x) { return std::sqrt(meanPower(x)); }

double powerDb(double power) { return power > 0.0 ? 10.0 * std::log10(power) : -std::numeric_limits<double>::infinity(); }

double activePower(std::span<const double> x, double sampleRate, double rangeDb)
{
    const std::vector<double> p = framePowers(x, sampleRate);
    if (p.empty())
        return 0.0;
    const double loudest = *std::max_element(p.begin(), p.end());
    if (!(loudest > 0.0))
        return 0.0;
    const double threshold = loudest * std::pow(10.0, -rangeDb / 10.0);
    const std::size_t len = frameLength(sampleRate);
    double energy = 0.0;
    std::size_t samples = 0;
    for (std::size_t f = 0; f < p.size(); ++f) {
        if (p[f] < threshold)
            continue;
        const std::size_t start = f * len, end = std::min(x.size(), start + len);
        energy += p[f] * static_cast<double>(end - start);
        samples += end - start;
    }
    return energy / static_cast<double>(samples);
}

double gainForRatioDb(std::span<const double> signal, std::span<const double> reference, double ratioDb,
                      double sampleRate)
{
    const double ps = activePower(signal, sampleRate);
    const double pr = activePower(reference, sampleRate);
    if (!(ps > 0.0) || !(pr > 0.0))
        throw std::invalid_argument("gainForRatioDb: signal or reference is silent");
    return std::sqrt(pr / ps * std::pow(10.0, -ratioDb / 10.0));
}

void scale(std::span<double> x, double gain)
{
    for (auto& v : x)
        v *= gain;
}

std::vector<double> bandLimited(std::span<const double> x, double sampleRate, double lowHz, double highHz,
                                double edgeHz)
{
    auto edge = [&](double distance) { // 0 at the band edge's outside, 1 at edgeHz inside
        return distance <= 0.0 ? 0.0 : distance >= edgeHz ? 1.0 : 0.5 - 0.5 * std::cos(std::numbers::pi * distance / edgeHz);
    };
    return zeroPhaseFiltered(x, sampleRate, [&](double f) { return edge(f - lowHz + edgeHz) * edge(highHz - f); });
}

std::vector<double> speechShapedNoise(std::span<const double> speech, std::size_t n, std::uint32_t seed)
{
    if (speech.empty() || n == 0)
        return {};
    // The speech repeated to the noise's length; its spectrum's phases replaced by random ones.
    const std::size_t size = nextPowerOfTwo(n);
    std::vector<std::complex<double>> spectrum(size);
    for (std::size_t i = 0; i < size; ++i)
        spectrum[i] = speech[i % speech.size()];
    fft(spectrum, false);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> phase(0.0, 2.0 * std::numbers::pi);
    spectrum[0] = 0.0;
    for (std::size_t k = 1; k < size / 2; ++k) {
        spectrum[k] = std::polar(std::abs(spectrum[k]), phase(rng));
        spectrum[size - k] = std::conj(spectrum[k]);
    }
    spectrum[size / 2] = std::abs(spectrum[size / 2]);
    fft(spectrum, true);
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n; ++i)
        y[i] = spectrum[i].real();
    const double r = rms(y);
    if (r > 0.0)
        scale(y, 1.0 / r);
    return y;
}

std::vector<double> deviceChain(std::span<const double> x, double sampleRate, std::uint32_t seed)
{
    const double level = std::sqrt(activePower(x, sampleRate));
    if (!(level > 0.0))
        return std::vector<double>(x.begin(), x.end());
    // Compressor on the peaks: envelope (3 ms attack, 100 ms release), 2:1 above twice the active RMS,
    // 3 dB of make-up.
    const double attack = std::exp(-1.0 / (0.003 * sampleRate)), release = std::exp(-1.0 / (0.1 * sampleRate));
    std::vector<double> c(x.size());
    double env = 0.0;
    for (std::size_t n = 0; n < x.size(); ++n) {
        const double a = std::abs(x[n]);
        env = a > env ? attack * env + (1.0 - attack) * a : release * env + (1.0 - release) * a;
        const double over = env / (2.0 * level);
        const double gain = over > 1.0 ? std::pow(over, 1.0 / 2.0 - 1.0) : 1.0;
        c[n] = 1.4 * gain * x[n];
    }
    // Hard clipper at 2.5 times the input's active RMS, then an asymmetric loudspeaker curve.
    const double clip = 2.5 * level;
    for (auto& v : c) {
        const double z = std::clamp(v, -clip, clip) / clip;
        v = clip * (z + 0.35 * z * z - 0.25 * z * z * z);
    }
    // A small speaker: nothing below 250 Hz, rolling off above 5 kHz (fourth order each, causal).
    std::vector<double> speaker = causalFiltered(c, {cookbook("highpass", 250.0, 0.54, sampleRate), cookbook("highpass", 250.0, 1.31, sampleRate),
                                                     cookbook("lowpass", 5000.0, 0.54, sampleRate), cookbook("lowpass", 5000.0, 1.31, sampleRate)});
    // Rattle: the rectified drive through a resonance near 2.8 kHz, 15 dB under the speaker's output.
    std::vector<double> rect(c.size());
    for (std::size_t n = 0; n < c.size(); ++n)
        rect[n] = std::abs(c[n]);
    std::vector<double> rattle = causalFiltered(rect, {cookbook("bandpass", 2800.0, 6.0, sampleRate)});
    const double rs = rms(rattle), ss = rms(speaker);
    if (rs > 0.0)
        for (std::size_t n = 0; n < speaker.size(); ++n)
            speaker[n] += 0.18 * ss / rs * rattle[n];
    // The acoustic delay wanders (+-0.4 ms at two slow rates with random phases) around 1 ms: what the
    // loudspeaker plays keeps its power envelope but loses its phase relation to the far end above a
    // few hundred hertz.
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> phase(0.0, 2.0 * std::numbers::pi);
    const double p1 = phase(rng), p2 = phase(rng);
    std::vector<double> delay(x.size());
    for (std::size_t n = 0; n < x.size(); ++n) {
        const double t = static_cast<double>(n) / sampleRate;
        delay[n] = sampleRate * (0.001 + 0.00025 * std::sin(2.0 * std::numbers::pi * 0.7 * t + p1)
                                 + 0.00015 * std::sin(2.0 * std::numbers::pi * 1.9 * t + p2));
    }
    return variablyDelayed(speaker, delay);
}

std::vector<double> softClip(std::span<const double> x, double drive)
{
    std::vector<double> y(x.begin(), x.end());
    if (drive <= 0.0)
        return y;
    for (auto& v : y)
        v = std::tanh(drive * v) / drive;
    return y;
}

double signalToDistortionDb(std::span<const double> x, std::span<const double> y)
{
    double xy = 0.0, xx = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        xy += x[i] * y[i];
        xx += x[i] * x[i];
    }
    if (!(xx > 0.0))
        throw std::invalid_argument("signalToDistortionDb: silent input");
    const double a = xy / xx;
    double lin = 0.0, dist = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double l = a * x[i];
        lin += l * l;
        dist += (y[i] - l) * (y[i] - l);
    }
    return dist > 0.0 ? 10.0 * std::log10(lin / dist) : std::numeric_limits<double>::infinity();
}

double driveForDistortion(std::span<const double> x, double targetDb)
{
    // Distortion grows with drive; bracket in log(drive) and bisect.
    double lo = 1e-3, hi = 1e3;
    for (int i = 0; i < 60; ++i) {
        const double mid = std::sqrt(lo * hi);
        if (signalToDistortionDb(x, softClip(x, mid)) > targetDb)
            lo = mid;
        else
            hi = mid;
    }
    return std::sqrt(lo * hi);
}

std::vector<double> delayed(std::span<const double> x, std::size_t samples)
{
    std::vector<double> y(x.size(), 0.0);
    for (std::size_t i = samples; i < x.size(); ++i)
        y[i] = x[i - samples];
    return y;
}

std::vector<double> switchedConvolution(std::span<const double> x, std::span<const double> before,
                                        std::span<const double> after, std::size_t switchSample)
{
    std::vector<double> y = convolveCausal(x, before);
    if (switchSample >= x.size())
        return y;
    const std::vector<double> y2 = convolveCausal(x, after);
    std::copy(y2.begin() + static_cast<std::ptrdiff_t>(switchSample), y2.end(),
              y.begin() + static_cast<std::ptrdiff_t>(switchSample));
    return y;
}

std::vector<Interval> activityIntervals(std::span<const double> x, double sampleRate, double rangeDb,
                                        double bridgeSeconds)
{
    const std::vector<double> p = framePowers(x, sampleRate);
    std::vector<Interval> out;
    if (p.empty())
        return out;
    const double loudest = *std::max_element(p.begin(), p.end());
    if (!(loudest > 0.0))
        return out;
    const double threshold = loudest * std::pow(10.0, -rangeDb / 10.0);
    const double frameSeconds = static_cast<double>(frameLength(sampleRate)) / sampleRate;
    const double total = static_cast<double>(x.size()) / sampleRate;
    for (std::size_t f = 0; f < p.size(); ++f) {
        if (p[f] < threshold)
            continue;
        const double start = static_cast<double>(f) * frameSeconds;
        const double end = std::min(total, start + frameSeconds);
        if (!out.empty() && start - out.back().second < bridgeSeconds)
            out.back().second = end;
        else
            out.emplace_back(start, end);
    }
    return out;
}

std::vector<Interval> intersect(const std::vector<Interval>& a, const std::vector<Interval>& b)
{
    std::vector<Interval> out;
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const double start = std::max(a[i].first, b[j].first);
        const double end = std::min(a[i].second, b[j].second);
        if (end > start)
            out.emplace_back(start, end);
        if (a[i].second < b[j].second)
            ++i;
        else
            ++j;
    }
    return out;
}

std::vector<double> truncateWithFade(std::span<const double> h, std::size_t samples, std::size_t fadeSamples)
{
    std::vector<double> out(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(std::min(samples, h.size())));
    const std::size_t fade = std::min(fadeSamples, out.size());
    for (std::size_t i = 0; i < fade; ++i) {
        // Weight 1 just before the fade, approaching 0 at the last sample kept.
        const double x = static_cast<double>(i + 1) / static_cast<double>(fade + 1);
        out[out.size() - fade + i] *= 0.5 * (1.0 + std::cos(std::numbers::pi * x));
    }
    return out;
}

void quantizeToPcm16(std::span<double> x)
{
    for (auto& v : x)
        v = std::clamp(std::nearbyint(v * 32768.0), -32768.0, 32767.0) / 32768.0;
}

} // namespace quell::corpus
