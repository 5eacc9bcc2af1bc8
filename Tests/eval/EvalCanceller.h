// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// An echo canceller under evaluation: Quell's or a peer's, run offline over a whole scenario.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "aec/EchoCancellerSettings.h"
#include "aec/ResidualEchoSuppressor.h"

namespace quell::eval {

class EvalCanceller {
public:
    virtual ~EvalCanceller() = default;
    virtual std::string name() const = 0;
    virtual std::string description() const = 0;
    // A fresh canceller per call: returns the output for mic (one channel) with far end ref (one vector
    // per loudspeaker; mono cancellers get the downmix), all at sampleRate.
    virtual std::vector<float> run(const std::vector<float>& mic, const std::vector<std::vector<float>>& ref,
                                   int sampleRate) = 0;
    // The linear, time-invariant front end the canceller applies to its microphone (Quell: a DC high-pass),
    // applied to the clean components too, so that output minus near end minus noise is exactly the echo
    // residual (for cancellers whose path from mic to output is otherwise linear).
    // Quell only: the far-end delay it found by the end of the last run, applied or left as the echo's lag
    // within its taps (NaN for peers).
    virtual double lastDelayFoundMs() const { return std::nan(""); }
    // Quell only: the adaptive filter's covariance re-initialisations by its numerical safeguard in the last
    // run (loss of positive definiteness, non-finite values; path-change restarts are not counted); -1 for peers.
    virtual long lastReinitialisations() const { return -1; }
    virtual void frontEnd(std::vector<float>& signal, int sampleRate) const { (void)signal; (void)sampleRate; }
};

struct QuellOptions {
    // The canceller's settings as quell-render's options set them (Standalone/CancellerOptions), with the
    // evaluation's own defaults: 1024 taps, the CPU, one RLS thread (no per-sample barrier; robust on a
    // loaded machine). The sample rate and far-end channels are each scenario's.
    aec::EchoCancellerSettings settings = [] {
        aec::EchoCancellerSettings s;
        s.taps = 1024;
        s.backend = aec::Backend::Cpu;
        s.cpuThreads = 1;
        return s;
    }();
    bool multichannel = true;      // a stereo far end to a two-channel filter (false: the downmix)
};

std::unique_ptr<EvalCanceller> makeQuellCanceller(const QuellOptions& options);
// Return nullptr (with `whyNot`) when the peer library was not found at build time.
std::unique_ptr<EvalCanceller> makeSpeexCanceller(bool residualSuppression, std::string& whyNot);
std::unique_ptr<EvalCanceller> makeWebRtcCanceller(std::string& whyNot);

// Mean of the loudspeaker channels (what a mono canceller can use of a stereo far end).
std::vector<float> downmix(const std::vector<std::vector<float>>& ref);

} // namespace quell::eval
