// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Estimates the bulk delay of the echo: how far the far end (reference) must be delayed to line up with
// its echo in the microphone, from 0 to maxDelaySeconds (1 s by default), so that the adaptive filter's
// taps cover the room's response rather than the delay of the playback and capture paths.
//
// Method: both signals are decimated to about 4 kHz (block mean) and pre-whitened with a first-order
// difference (speech is strongly low-pass; whitening sharpens the correlation peak), and the
// cross-correlation at every lag is averaged with an exponential memory of `memorySeconds`. Averaging
// pauses while the far end is silent (its short-term power below `silenceFloor`), so silence neither
// erases the estimate nor adds noise to it. The estimate is the lag of the largest |correlation|; it is
// reported only when that peak stands out (normalised correlation above `minConfidence`) and has stayed
// at the same lag (within one decimated sample) for `holdSeconds`, so single noisy peaks do not move the
// filter. Nothing is reported before `warmupSeconds` of far-end activity: with a few samples averaged
// every lag's normalised correlation is high, and only the prominence test tells an echo from chance.
// A delayed speech echo is found about 0.2 s after it starts (0.1 s warm-up, 0.05 s hold); with a
// memory of 0.4 s a change of delay is followed within about a second of far-end speech.
//
// Cost: lags x 4000 multiply-adds per second of input (16 M/s for 1 s of lags): a few % of one core.
// Threading: prepare() from any thread, process() from one thread; process() does not allocate.
#include <cstddef>
#include <span>
#include <vector>

#include "dsp/ProcessSpec.h"

namespace quell::aec {

struct DelayEstimatorSettings {
    double maxDelaySeconds = 1.0;
    double memorySeconds = 0.4;
    double holdSeconds = 0.05;
    // Far-end activity before the first estimate may be reported.
    double warmupSeconds = 0.1;
    double minConfidence = 0.1;
    // The peak over the RMS of the correlation across all lags: unrelated signals give about
    // sqrt(2 ln lags) (4 to 7 for 4000 lags), an echo 15 or more.
    double minProminence = 9.0;
    double silenceFloor = 1e-7;   // mean square of the far end (-70 dBFS)
    // A new lag replaces the one in use (none: lag 0) only when its correlation is this many times
    // larger: voiced speech and strong early reflections make side peaks that lead for a moment (one
    // 2.3 times the true peak was seen), and every move costs the filter a restart.
    double switchRatio = 3.0;
};

class FarEndDelayEstimator {
public:
    // spec: the rate (at least 8 kHz). Throws std::invalid_argument on bad settings.
    void prepare(const DelayEstimatorSettings& settings, const dsp::ProcessSpec& spec);
    void reset();
    // mic and ref the same length, any block size.
    void process(std::span<const float> mic, std::span<const float> ref);

    // The delay in samples at the input rate (a multiple of the decimation factor); 0 until found.
    int delaySamples() const { return reported_ * factor_; }
    bool found() const { return found_; }
    // Normalised correlation at the current peak (0..1).
    double confidence() const { return confidence_; }
    int decimation() const { return factor_; }

private:
    void addDecimated(float m, float r);
    void pickPeak();

    DelayEstimatorSettings settings_{};
    int factor_ = 4, lags_ = 0, filled_ = 0;   // filled_: lags the far-end line holds samples for
    double alpha_ = 0.0, shortAlpha_ = 0.0;
    int holdChecks_ = 1, checkEvery_ = 64;
    std::vector<float> refLine_;   // whitened decimated far end, twice the lags (contiguous window)
    std::vector<float> corr_;   // float: eight lags a vector (double: four); see decayLagProducts
    std::size_t pos_ = 0;
    double micAcc_ = 0.0, refAcc_ = 0.0;
    int inBlock_ = 0;
    float prevMic_ = 0.0f, prevRef_ = 0.0f;
    double micPower_ = 0.0, refPower_ = 0.0, refShort_ = 0.0;
    long activeSamples_ = 0, warmupSamples_ = 0;
    int sinceCheck_ = 0, candidate_ = -1, candidateChecks_ = 0, reported_ = 0;
    bool found_ = false;
    double confidence_ = 0.0, prominence_ = 0.0;
};

} // namespace quell::aec
