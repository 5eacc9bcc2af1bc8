// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Shoebox-room impulse responses by the image-source method (Allen & Berkley 1979), for the echo
// canceller's test material: the loudspeaker-to-microphone path of a simulated room.
//
// Every image source contributes  prod(beta_wall ^ reflections) / (4 pi d)  at the delay d / c. The
// delay is fractional, so each contribution is spread over neighbouring samples by a Hann-windowed sinc
// (Peterson 1986) instead of being rounded to the nearest sample, which would smear the high band and
// put the direct path at the wrong time. The image sum has a DC excess (all contributions are positive
// for walls with positive reflection coefficients), so a high-pass follows, as Allen & Berkley recommend.
#include <array>
#include <cstddef>
#include <vector>

namespace quell::corpus {

struct Point3 {
    double x = 0.0, y = 0.0, z = 0.0;
};

double distance(const Point3& a, const Point3& b);

// Pressure reflection coefficient of each wall: x = 0, x = Lx, y = 0, y = Ly, z = 0, z = Lz.
using WallReflections = std::array<double, 6>;

struct ShoeboxRoom {
    Point3 size;                 // metres, all positive
    WallReflections reflection;  // each in [0, 1)
};

struct RirOptions {
    double sampleRate = 16000.0;
    double lengthSeconds = 0.5;   // the response is cut here (images arriving later are left out)
    double soundSpeed = 343.0;    // m/s, air at about 20 C
    int sincHalfWidth = 16;       // fractional-delay kernel: taps on each side of the arrival time
    double highPassHz = 30.0;     // second-order Butterworth high-pass for the DC excess; 0 = none
};

// Uniform wall reflection coefficient giving a target RT60 (seconds) in this room.
// Eyring: RT60 = 0.161 V / (-S ln(1 - alpha)), the decay of the image method's mean-free-path model;
// Sabine: RT60 = 0.161 V / (S alpha), the classic formula, which overestimates absorption needs in
// dead rooms (alpha would exceed 1 for very short RT60: such targets throw).
// beta = sqrt(1 - alpha). Throws std::invalid_argument for non-positive sizes or RT60.
double eyringReflection(const Point3& roomSize, double rt60, double soundSpeed = 343.0);
double sabineReflection(const Point3& roomSize, double rt60, double soundSpeed = 343.0);
// The RT60 Eyring predicts for a uniform reflection coefficient (inverse of eyringReflection).
double eyringRt60(const Point3& roomSize, double reflection, double soundSpeed = 343.0);

// Uniform reflection coefficient for which the image method itself decays at the target RT60 (T30).
// Eyring assumes a diffuse field: one mean reflection rate S c / (4 V) for all sound. In an image-source
// shoebox, sound travelling along direction u meets walls at its own rate c sum_a |u_a| / L_a, so the
// energy is an average of exponentials over directions and its late part (the slowest directions,
// along the longest dimensions) decays more slowly than Eyring predicts: measured T30 comes out up to
// 20-25% long in elongated rooms. This solves for the coefficient whose direction-averaged decay
// curve, fitted like a measured T30, matches the target.
double imageMethodReflection(const Point3& roomSize, double rt60, double soundSpeed = 343.0);

ShoeboxRoom uniformRoom(const Point3& size, double reflection);

// Impulse response from `source` to `mic` (both strictly inside the room), lengthSeconds * sampleRate
// samples, index 0 = emission time. Throws std::invalid_argument for positions outside the room or bad
// options.
std::vector<double> shoeboxImpulseResponse(const ShoeboxRoom& room, const Point3& source, const Point3& mic,
                                           const RirOptions& options);

} // namespace quell::corpus
