// SPDX-License-Identifier: GPL-3.0-or-later
#include "corpus/ImpulseResponseAnalysis.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace quell::corpus {

std::vector<double> schroederDecayDb(std::span<const double> h)
{
    std::vector<double> edc(h.size());
    double acc = 0.0;
    for (std::size_t n = h.size(); n-- > 0;) {
        acc += h[n] * h[n];
        edc[n] = acc;
    }
    const double total = h.empty() ? 0.0 : edc[0];
    if (!(total > 0.0))
        throw std::runtime_error("impulse response has no energy");
    for (auto& e : edc)
        e = e > 0.0 ? 10.0 * std::log10(e / total) : -std::numeric_limits<double>::infinity();
    return edc;
}

double decayTime(std::span<const double> h, double sampleRate, double fromDb, double toDb)
{
    if (!(fromDb < 0.0 && toDb < fromDb))
        throw std::invalid_argument("decayTime: need 0 > fromDb > toDb");
    const std::vector<double> edc = schroederDecayDb(h);
    // Regression over every sample whose EDC lies in [toDb, fromDb]: the EDC is monotone, so that is
    // one contiguous range.
    double st = 0.0, sd = 0.0, stt = 0.0, std_ = 0.0;
    std::size_t count = 0;
    bool reached = false;
    for (std::size_t n = 0; n < edc.size(); ++n) {
        if (edc[n] > fromDb)
            continue;
        if (edc[n] < toDb) {
            reached = true;
            break;
        }
        const double t = static_cast<double>(n) / sampleRate;
        st += t;
        sd += edc[n];
        stt += t * t;
        std_ += t * edc[n];
        ++count;
    }
    if (!reached || count < 2)
        throw std::runtime_error("decayTime: the energy decay curve does not reach " + std::to_string(toDb)
                                 + " dB (response too short)");
    const double c = static_cast<double>(count);
    const double slope = (c * std_ - st * sd) / (c * stt - st * st); // dB per second, negative
    if (!(slope < 0.0))
        throw std::runtime_error("decayTime: the energy decay curve does not decay");
    return -60.0 / slope;
}

double tailEnergyDb(std::span<const double> h, std::size_t from)
{
    double total = 0.0, tail = 0.0;
    for (std::size_t n = 0; n < h.size(); ++n) {
        total += h[n] * h[n];
        if (n >= from)
            tail += h[n] * h[n];
    }
    if (!(total > 0.0))
        throw std::runtime_error("impulse response has no energy");
    return tail > 0.0 ? 10.0 * std::log10(tail / total) : -std::numeric_limits<double>::infinity();
}

std::size_t peakIndex(std::span<const double> h)
{
    std::size_t best = 0;
    for (std::size_t n = 1; n < h.size(); ++n)
        if (std::abs(h[n]) > std::abs(h[best]))
            best = n;
    return best;
}

} // namespace quell::corpus
