// SPDX-License-Identifier: GPL-3.0-or-later
#include "CancellerOptions.h"

#include "aec/Backend.h"
#include "aec/FilterKind.h"

namespace quell::standalone {

bool parseCancellerOption(const std::string& a, io::Arguments& args, aec::EchoCancellerSettings& s)
{
    if (a == "--taps") {
        const std::string v = args.value();
        s.taps = v == "auto" ? 0 : io::parseInt("--taps", v, aec::kMinTaps, aec::kMaxTaps);
    } else if (a == "--lambda") {
        const std::string v = args.value();
        s.lambda = v == "auto" ? 0.0 : io::parseDouble("--lambda", v, 0.9, 1.0);
    } else if (a == "--backend") {
        s.backend = aec::parseBackend(a, args.value());
    } else if (a == "--filter") {
        s.filter = aec::parseFilterKind(a, args.value());
    } else if (a == "--suppression") {
        const double db = io::parseDouble("--suppression", args.value(), 0.0, 60.0);
        s.suppressor.enabled = db > 0.0;
        s.suppressor.maxAttenuationDb = db;
    } else if (a == "--no-comfort-noise") {
        s.suppressor.comfortNoise = false;
    } else if (a == "--distortion-model") {
        s.distortionFilter = true;
    } else {
        return false;
    }
    return true;
}

void printCancellerOptions(std::FILE* f, CancellerUse use)
{
    if (use == CancellerUse::Offline)
        std::fputs("  --taps N          adaptive filter length at the canceller rate, 8 to 8192, or auto (default: auto,\n"
                   "                    4096 = 256 ms at 16 kHz on a GPU that runs it 3x faster than real time, else 1024)\n",
                   f);
    else
        std::fputs("  --taps N          adaptive filter length at the canceller rate, 8 to 8192, or auto (default: auto,\n"
                   "                    4096 = 256 ms at 16 kHz on a GPU that runs it 3x faster than real time; on the\n"
                   "                    CPU the Kalman filter at 4096)\n",
                   f);
    std::fputs("  --lambda L        RLS forgetting factor, 0.9 to 1, or auto (default: auto, a memory of 10 x the taps, at least\n"
               "                    10000 samples = 0.6 s at 16 kHz; 0.9999 up to 1000 taps)\n"
               "  --backend B       cpu, gpu or auto (default auto: the GPU when usable, else the CPU)\n",
               f);
    if (use == CancellerUse::Offline)
        std::fputs("  --filter F        rls, kalman or auto (default auto: RLS; kalman = the CPU's frequency-domain\n"
                   "                    Kalman filter, 256 ms by default, at a few per cent of a core)\n",
                   f);
    else
        std::fputs("  --filter F        rls, kalman or auto (default auto: RLS on a GPU; on the CPU RLS where it fits\n"
                   "                    half a core, else the frequency-domain Kalman filter)\n",
                   f);
    std::fputs("  --suppression DB  residual echo suppression after the filter, at most DB of attenuation, 0 to 60\n"
               "                    (default 40; 0 = the linear filter alone, with no suppressor and its 8 ms frame)\n"
               "  --no-comfort-noise  no noise in place of what the suppressor removes\n"
               "  --distortion-model  fit an overdriven loudspeaker's distortion before the linear filter (off by\n"
               "                    default: it helps the linear filter, but the suppressor then takes less)\n",
               f);
}

} // namespace quell::standalone
