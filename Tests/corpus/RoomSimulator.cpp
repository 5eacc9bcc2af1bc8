// SPDX-License-Identifier: GPL-3.0-or-later
#include "corpus/RoomSimulator.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "dsp/BiquadCascade.h"

namespace quell::corpus {
namespace {

// 24 ln(10) / c: the constant of Sabine's and Eyring's formulas (0.161 s/m for c = 343 m/s).
double sabineConstant(double soundSpeed) { return 24.0 * std::numbers::ln10 / soundSpeed; }

void requirePositiveSize(const Point3& s)
{
    if (!(s.x > 0.0 && s.y > 0.0 && s.z > 0.0))
        throw std::invalid_argument("room: every dimension must be positive");
}

double volume(const Point3& s) { return s.x * s.y * s.z; }
double surface(const Point3& s) { return 2.0 * (s.x * s.y + s.x * s.z + s.y * s.z); }

bool inside(const Point3& p, const Point3& size)
{
    return p.x > 0.0 && p.y > 0.0 && p.z > 0.0 && p.x < size.x && p.y < size.y && p.z < size.z;
}

std::string describe(const Point3& p)
{
    return "(" + std::to_string(p.x) + ", " + std::to_string(p.y) + ", " + std::to_string(p.z) + ")";
}

} // namespace

double distance(const Point3& a, const Point3& b)
{
    const double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    return std::sqrt(dx * dx + dy * dy + dz * dz);
}

double eyringReflection(const Point3& size, double rt60, double soundSpeed)
{
    requirePositiveSize(size);
    if (!(rt60 > 0.0))
        throw std::invalid_argument("room: RT60 must be positive");
    // 1 - alpha = exp(-K V / (S T)),  beta = sqrt(1 - alpha).
    return std::exp(-0.5 * sabineConstant(soundSpeed) * volume(size) / (surface(size) * rt60));
}

double sabineReflection(const Point3& size, double rt60, double soundSpeed)
{
    requirePositiveSize(size);
    if (!(rt60 > 0.0))
        throw std::invalid_argument("room: RT60 must be positive");
    const double alpha = sabineConstant(soundSpeed) * volume(size) / (surface(size) * rt60);
    if (alpha >= 1.0)
        throw std::invalid_argument("room: RT60 " + std::to_string(rt60)
                                    + " s is below what Sabine's formula allows in this room (alpha >= 1)");
    return std::sqrt(1.0 - alpha);
}

double eyringRt60(const Point3& size, double reflection, double soundSpeed)
{
    requirePositiveSize(size);
    if (!(reflection > 0.0 && reflection < 1.0))
        throw std::invalid_argument("room: reflection coefficient must be in (0, 1)");
    return -0.5 * sabineConstant(soundSpeed) * volume(size) / (surface(size) * std::log(reflection));
}

double imageMethodReflection(const Point3& size, double rt60, double soundSpeed)
{
    const double eyring = eyringReflection(size, rt60, soundSpeed);
    // Directions on a Fibonacci sphere (one octant suffices by symmetry); each has a wall-hit rate
    // per second of sound travel, per unit of -ln(beta^2).
    constexpr int kDirections = 2000;
    std::vector<double> rate(kDirections);
    const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
    for (int i = 0; i < kDirections; ++i) {
        const double z = (i + 0.5) / kDirections; // octant: z in (0, 1)
        const double r = std::sqrt(1.0 - z * z);
        const double phi = golden * i;
        rate[static_cast<std::size_t>(i)] = soundSpeed
            * (std::abs(r * std::cos(phi)) / size.x + std::abs(r * std::sin(phi)) / size.y + z / size.z);
    }
    // T30 of the modelled decay for a reflection coefficient: Schroeder curve
    // EDC(t) = mean_u exp(-k_u t) / k_u (the integral of the energy from t on), fitted from -5 to -35 dB.
    auto modelT30 = [&](double beta) {
        const double g = -std::log(beta * beta);
        auto edcDb = [&](double t) {
            double acc = 0.0, acc0 = 0.0;
            for (const double k : rate) {
                acc += std::exp(-g * k * t) / (g * k);
                acc0 += 1.0 / (g * k);
            }
            return 10.0 * std::log10(acc / acc0);
        };
        // Sample the curve on a grid reaching past -35 dB and fit a line, as decayTime() does.
        const double dt = rt60 / 400.0;
        double st = 0.0, sd = 0.0, stt = 0.0, sdt = 0.0, count = 0.0;
        for (double t = 0.0; t < 20.0 * rt60; t += dt) {
            const double e = edcDb(t);
            if (e < -35.0)
                break;
            if (e > -5.0)
                continue;
            st += t;
            sd += e;
            stt += t * t;
            sdt += t * e;
            count += 1.0;
        }
        const double slope = (count * sdt - st * sd) / (count * stt - st * st);
        return -60.0 / slope;
    };
    // The modelled T30 grows with beta; Eyring's beta is an upper bound. Bisect on beta.
    double lo = 1e-4, hi = eyring;
    for (int i = 0; i < 50; ++i) {
        const double mid = 0.5 * (lo + hi);
        (modelT30(mid) > rt60 ? hi : lo) = mid;
    }
    return 0.5 * (lo + hi);
}

ShoeboxRoom uniformRoom(const Point3& size, double reflection)
{
    ShoeboxRoom room;
    room.size = size;
    room.reflection.fill(reflection);
    return room;
}

std::vector<double> shoeboxImpulseResponse(const ShoeboxRoom& room, const Point3& source, const Point3& mic,
                                           const RirOptions& o)
{
    requirePositiveSize(room.size);
    for (const double b : room.reflection)
        if (!(b >= 0.0 && b < 1.0))
            throw std::invalid_argument("room: wall reflection coefficients must be in [0, 1)");
    if (!inside(source, room.size))
        throw std::invalid_argument("room: source " + describe(source) + " is not inside the room");
    if (!inside(mic, room.size))
        throw std::invalid_argument("room: microphone " + describe(mic) + " is not inside the room");
    if (!(o.sampleRate > 0.0 && o.lengthSeconds > 0.0 && o.soundSpeed > 0.0 && o.sincHalfWidth >= 1))
        throw std::invalid_argument("room: sample rate, length, sound speed and kernel width must be positive");
    if (o.highPassHz < 0.0 || o.highPassHz >= 0.5 * o.sampleRate)
        throw std::invalid_argument("room: high-pass cutoff must be in [0, Nyquist)");

    const auto length = static_cast<std::size_t>(std::llround(o.lengthSeconds * o.sampleRate));
    std::vector<double> h(length, 0.0);
    const double samplesPerMetre = o.sampleRate / o.soundSpeed;
    const int halfWidth = o.sincHalfWidth;
    // Images whose kernel would start after the end of the response add nothing.
    const double maxDistance = (static_cast<double>(length) + halfWidth) / samplesPerMetre;

    const double sizes[3] = {room.size.x, room.size.y, room.size.z};
    const double src[3] = {source.x, source.y, source.z};
    const double rcv[3] = {mic.x, mic.y, mic.z};
    int maxIndex[3];
    for (int a = 0; a < 3; ++a)
        maxIndex[a] = static_cast<int>(std::ceil(maxDistance / (2.0 * sizes[a]))) + 1;

    // Per axis, per (n, q): the image's offset from the mic along that axis and its wall attenuation.
    // Image coordinate (1 - 2q) s + 2 n L; it met wall 0 of the axis |n - q| times and wall L |n| times.
    struct AxisImage {
        double offset;
        double gain;
    };
    std::vector<AxisImage> axis[3];
    for (int a = 0; a < 3; ++a)
        for (int n = -maxIndex[a]; n <= maxIndex[a]; ++n)
            for (int q = 0; q <= 1; ++q) {
                const double coord = (1 - 2 * q) * src[a] + 2.0 * n * sizes[a];
                const double gain = std::pow(room.reflection[2 * a], std::abs(n - q))
                                    * std::pow(room.reflection[2 * a + 1], std::abs(n));
                axis[a].push_back({coord - rcv[a], gain});
            }

    const double maxDistance2 = maxDistance * maxDistance;
    const double window = halfWidth + 1.0; // Hann half-length: zero just beyond the outermost tap
    for (const AxisImage& ix : axis[0]) {
        if (ix.gain == 0.0)
            continue;
        for (const AxisImage& iy : axis[1]) {
            const double dxy2 = ix.offset * ix.offset + iy.offset * iy.offset;
            if (dxy2 > maxDistance2 || iy.gain == 0.0)
                continue;
            for (const AxisImage& iz : axis[2]) {
                const double d2 = dxy2 + iz.offset * iz.offset;
                if (d2 > maxDistance2)
                    continue;
                const double gain = ix.gain * iy.gain * iz.gain;
                if (gain == 0.0)
                    continue;
                const double d = std::sqrt(d2);
                const double amplitude = gain / (4.0 * std::numbers::pi * d);
                const double arrival = d * samplesPerMetre;
                const auto centre = static_cast<long>(std::floor(arrival));
                const double frac = arrival - static_cast<double>(centre);
                // sin(pi (k - frac)) = -(-1)^k sin(pi frac): one sine per image instead of one per tap.
                const double sinFrac = std::sin(std::numbers::pi * frac);
                for (int k = -halfWidth; k <= halfWidth + 1; ++k) {
                    const long idx = centre + k;
                    if (idx < 0 || idx >= static_cast<long>(length))
                        continue;
                    const double t = static_cast<double>(k) - frac; // tap time relative to the arrival
                    if (std::abs(t) >= window)
                        continue;
                    double sinc;
                    if (std::abs(t) < 1e-12)
                        sinc = 1.0;
                    else
                        sinc = ((k & 1) ? sinFrac : -sinFrac) / (std::numbers::pi * t);
                    const double w = 0.5 * (1.0 + std::cos(std::numbers::pi * t / window));
                    h[static_cast<std::size_t>(idx)] += amplitude * sinc * w;
                }
            }
        }
    }

    if (o.highPassHz > 0.0) {
        const dsp::Biquad section = dsp::butterworthHighPass(o.highPassHz, o.sampleRate);
        dsp::BiquadCascade<double> highPass;
        highPass.prepare(std::span<const dsp::Biquad>(&section, 1));
        highPass.process(h, h);
    }
    return h;
}

} // namespace quell::corpus
