// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The figures of issue 7 for one canceller on one scenario, from the separate clean components.
//
// ERLE is measured on the echo: echo power over residual power, where residual = output - near - noise
// (the components passed through the canceller's own linear front end). For a linear canceller this is
// exactly the echo left in the output; for one that also suppresses (Speex + preprocessor, WebRTC) the
// removal or distortion of the noise counts as residual, which caps their figure near the ENR. A second
// column, mic over output power, is the classic definition (it counts noise removal as "echo" removed).
// Both over 50 ms frames in far-end single talk: frame within an echo-active interval, no near-end
// activity, echo frame power within 30 dB of the loudest frame.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eval/CorpusScenario.h"

namespace quell::eval {

struct EchoFigures {
    std::optional<double> steadyErleDb;       // residual ERLE over single-talk frames after the warm-up
    std::optional<double> steadyMicOverOutDb; // mic power / output power over the same frames
    std::optional<double> timeTo10dB, timeTo20dB;  // seconds from the start of echo to 3 frames in a row >= X
    std::optional<double> reconvergeTo20dB;   // seconds from the path change to 3 frames in a row >= 20 dB
    std::optional<double> minErleDb;          // worst single-talk frame after the warm-up (divergence check)
    std::optional<double> doubleTalkSnrDb;    // near end vs (output - near end), above 300 Hz, in double talk
    std::optional<double> nearAloneLossDb;    // input SNR minus output SNR (above 300 Hz) of a lone near end
    // Near-end SNR after a linear fit, over the samples where the near end is active: the output and the
    // clean near end plus noise both high-passed at 300 Hz, a least-squares FIR of 64 taps (lags -32 to
    // +31) fitted from the latter to the former over those samples, then the fit's power over the power of
    // (output - fit). A fixed filter or delay of the near end (a high-pass) is forgiven; cancellation,
    // smearing, gating, added or removed noise and echo left behind are counted.
    std::optional<double> nearSnrFitDb;
    // The loudest output-over-microphone power ratio of any 100 ms frame after the first second, outside
    // the 0.5 s after an echo-path change, and (when there is one) inside it; with the frame's start.
    std::optional<double> loudestFrameDb, loudestFrameSeconds;
    std::optional<double> loudestAfterChangeDb;
    std::vector<std::pair<double, double>> erleTrace;  // (frame start s, ERLE dB) of every single-talk frame
};

struct MetricSettings {
    double frameSeconds = 0.05;
    double warmupSeconds = 1.0;          // excluded from steady state (and again after a path change)
    int runLength = 3;                   // frames in a row for "reached"
    double snrHighPassHz = 300.0;
    int fitTaps = 64;
    double loudFrameSeconds = 0.1;
    double loudSkipSeconds = 1.0;          // the first second is not checked (initial convergence)
    double changeGraceSeconds = 0.5;       // after an echo-path change: counted apart
};

// A figure for a table: `precision` decimals, "-" when there is none.
std::string formatFigure(const std::optional<double>& value, int precision = 1);

// The components (near, echo, noise) are those after the canceller's front end.
EchoFigures measure(const CorpusScenario& s, const std::vector<float>& out, const std::vector<float>& near,
                    const std::vector<float>& echo, const std::vector<float>& noise,
                    const MetricSettings& settings = {});

} // namespace quell::eval
