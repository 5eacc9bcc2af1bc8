// SPDX-License-Identifier: GPL-3.0-or-later
#include "CancellerOptions.h"

#include "aec/Backend.h"
#include "aec/FilterKind.h"
#include "io/CommandLine.h"

namespace quell::standalone {

void addCancellerOptions(ProgramOptions& o, aec::EchoCancellerSettings& s, CancellerUse use)
{
    const bool offline = use == CancellerUse::Offline;
    o.option("--taps", "N",
             "adaptive filter length at the canceller rate, 8 to 8192, or auto (default: auto,\n"
             "4096 = 256 ms at 16 kHz on a GPU that runs it 3x faster than real time, and on the\n"
             "CPU)",
             [&s](const std::string& v) { s.taps = v == "auto" ? 0 : io::parseInt("--taps", v, aec::kMinTaps, aec::kMaxTaps); });
    o.option("--lambda", "L",
             "RLS forgetting factor, 0.9 to 1, or auto (default: auto, a memory of 10 x the taps, at least\n"
             "10000 samples = 0.6 s at 16 kHz; 0.9999 up to 1000 taps)",
             [&s](const std::string& v) { s.lambda = v == "auto" ? 0.0 : io::parseDouble("--lambda", v, 0.9, 1.0); });
    o.option("--backend", "B", "cpu, gpu or auto (default auto: the GPU when usable, else the CPU)",
             [&s](const std::string& v) { s.backend = aec::parseBackend("--backend", v); });
    o.option("--filter", "F",
             offline ? "rls, kalman, nlms or auto (default auto: RLS on a GPU; on the CPU the fast RLS, O(N)\n"
                       "per sample, for a mono far end; for a stereo one the two-channel fast RLS with the\n"
                       "frequency-domain Kalman filter and the fast RLS on the channels' mean beside it; nlms =\n"
                       "the CPU's normalised LMS, one far-end channel, for comparison)"
                     : "rls, kalman, nlms or auto (default auto: RLS on a GPU; on the CPU RLS where it fits\n"
                       "half a core, else the frequency-domain Kalman filter; nlms only where neither fits)",
             [&s](const std::string& v) { s.filter = aec::parseFilterKind("--filter", v); });
    o.option("--kalman-block", "B",
             "the Kalman filter's block, a power of two from 16 to 4096, or auto (default: auto,\n"
             "about taps / 32 from 64 to 256; smaller adapts more often and costs more)",
             [&s](const std::string& v) {
                 s.kalmanBlockSize = v == "auto" ? 0 : io::parseInt("--kalman-block", v, 16, 4096);
                 if ((s.kalmanBlockSize & (s.kalmanBlockSize - 1)) != 0)
                     throw io::UsageError("--kalman-block must be a power of two (got " + v + ")");
             });
    o.option("--suppression", "DB",
             "residual echo suppression after the filter, at most DB of attenuation, 0 to 60\n"
             "(default 40; 0 = the linear filter alone, with no suppressor and its 8 ms frame)",
             [&s](const std::string& v) {
                 const double db = io::parseDouble("--suppression", v, 0.0, 60.0);
                 s.suppressor.enabled = db > 0.0;
                 s.suppressor.maxAttenuationDb = db;
             });
    o.flag("--no-comfort-noise", "no noise in place of what the suppressor removes", [&s] { s.suppressor.comfortNoise = false; });
    o.flag("--distortion-model",
           "fit an overdriven loudspeaker's distortion before the linear filter (off by\n"
           "default: it helps the linear filter, but the suppressor then takes less)",
           [&s] { s.distortionFilter = true; });
}

} // namespace quell::standalone
