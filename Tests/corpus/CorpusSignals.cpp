#include "corpus/CorpusSignals.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>

#include "corpus/FftConvolution.h"

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
