// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Residual echo suppression after the linear filter: a gain per frequency bin that takes out the echo
// the adaptive filter leaves (the room's tail beyond its taps, a loudspeaker driven into distortion, a
// device's compressor and rattle, the error of a filter still converging), with comfort noise filling
// what it removes, and the last guard of the output's level.
//
// Frames: short-time spectra of N = 2H samples (H = hop, about 4 ms), square-root periodic Hann windows
// for analysis and synthesis (their product overlap-adds to exactly 1 at 50 %, so gains of 1 give the
// input back, delayed). The output is the input delayed by latencySamples() = N - 1, exactly.
//
// Residual model, per bin: R = max(Gl_b x Yr, margin x max_m Gm_b x Xm_b), where Yr is the power of the
// linear filter's echo estimate Y = D - E with a reverberant tail (Yr(t) = |Y(t)|^2 + rho Yr(t - 1), rho
// from `tailSeconds`), Xm_b the far-end models' predictors (the aligned far end's band power held at its
// peak and decaying at the room's rate, the whole far end's, and the same of what an overdriven
// loudspeaker adds to it: LoudspeakerExcessSpectrum), and G the
// residual-to-predictor ratios of the band, learnt by ResidualGainTrackers so that the near end does not
// inflate them. The far-end models are the ones that work when the linear filter cannot (echo only weakly
// coherent with the far end: AEC3's residual estimate when its linear filter is not good); their margin
// widens as the linear filter reaches less. Where the linear filter cancels well every ratio is small and
// the output passes untouched. Gain per bin:
// g = max(floor, 1 - overSubtraction * max(0, R / E_smoothed - masking)), falling at once and recovering
// over two frames; `floor` = -maxAttenuationDb. Bins where the near end or the noise is much louder than
// the residual keep g = 1 exactly.
//
// Output safety: a frame whose linear output is louder than the microphone (a filter diverging, a stale
// one after an echo-path change: `fallbackDb` over it, or `fallbackNearEndDb` where a near end talks over
// a filter that cancels) is replaced by the microphone's frame before
// the gains (the suppressor then takes out what it can of the echo in it), counted in fallbackFrames();
// and the suppressor adds no loudness of its own: no output frame, comfort noise included, is louder than
// the louder of the microphone's frame and the linear output's.
//
// Threading: prepare() off the real-time thread; process() and the setters from one thread at a time;
// no allocation after prepare.
#include <array>
#include <complex>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "aec/BandCoherence.h"
#include "aec/BandFollowing.h"
#include "aec/ComfortNoise.h"
#include "aec/FarEndPlay.h"
#include "aec/LoudspeakerExcessSpectrum.h"
#include "aec/ResidualGainTracker.h"
#include "dsp/Fft.h"
#include "dsp/ProcessSpec.h"

namespace quell::aec {

// The default maximum attenuation: tens of dB, for the echo a linear filter cannot model (a device's
// distortion) in far-end single talk; where the linear filter cancels well the gains stay at 1 anyway.
inline constexpr double kDefaultSuppressionDb = 40.0;

struct SuppressorSettings {
    bool enabled = true;               // off: no suppressor at all (and no latency)
    double frameSeconds = 0.008;       // N, rounded to a power of two (128 at 16 kHz)
    double maxAttenuationDb = kDefaultSuppressionDb;   // 0: gains of 1 (the latency stays)
    bool comfortNoise = true;
    double tailSeconds = 0.3;          // RT60 assumed for the reverberant part of the predictors
    double overSubtraction = 3.0;
    // Residual below this fraction of the output's power is left alone (masked by the near end and the
    // noise): 0.2 = 7 dB.
    double masking = 0.2;
    // A frame whose linear output is louder than the microphone by more than this is replaced by the
    // microphone's. Not less: in double talk the near end and the echo interfere in the microphone, and a
    // good output is now and then a little louder over one frame (replacing it would put the echo back).
    // A slower, smaller excess is the OutputGuard's.
    double fallbackDb = 3.0;
    // ... and by more than fallbackNearEndDb in a frame where a near end talks over a filter that cancels:
    // the output's power above the noise floor is fallbackNearEndAboveFloorDb or more over the floor (a
    // floor not yet known counts as no near end), and the output is not coherent with the linear filter's
    // echo estimate (BandCoherence over echoBurstSeconds, mean over the bands, under fallbackCoherence).
    // There the interference above is most of what makes an output louder, and over an 8 ms frame it
    // passed 3 dB: the corpus's stereo double talk fell back on a good output and played the echo back
    // (CPU defaults, near end after the fit 30.5 dB with 3 dB everywhere, 32.4 with this; music double
    // talk 35.6 -> 41.8, one voice in both channels 40.7 -> 42.1, near end 6 dB under the echo in RT60
    // 0.4 s 31.9 -> 33.0). 6 dB in every frame cost safety figures: loudest 100 ms frame over the
    // microphone +0.1 -> +0.6 dB (a far end that starts over line noise), within 0.5 s of a path change
    // +1.3 -> +1.5, an overdriven loudspeaker's worst frame 2.2 -> 1.2 dB of ERLE. The coherence's
    // condition alone kept the last two but not the loudest frames (an output that adds its echo estimate
    // over the noise where the far end pauses is not coherent with it either); with both conditions no
    // safety figure of the corpus moved (Tests/eval/results/2026-12-08/suppressor-fallback-near-end).
    double fallbackNearEndDb = 6.0;
    double fallbackNearEndAboveFloorDb = 10.0;
    double fallbackCoherence = 0.1;
    // The far-end models' residual is taken this much larger than their quantile: a device's echo
    // wanders around any prediction from the far end's power.
    double farEndMarginDb = 3.0;
    // ... and up to this much more where the linear filter cannot model the echo: all of it where its
    // reduction of the echo (above the noise, held at its recent peak, at most 40 dB) while the far end
    // plays is below weakFilterDb, none at strongFilterDb, in proportion between (measured on the corpus:
    // a device's chain, a few dB; a tanh loudspeaker at 18 dB SDR, 20 to 30 dB; a linear room, 40).
    double weakFilterMarginDb = 25.0;
    double weakFilterDb = 10.0, strongFilterDb = 40.0;
    ResidualGainSettings gains{};
    // The far-end models are used in a band whose output's power follows their predictor's by at least
    // this correlation (the linear model keeps gains.minCorrelation, 0.3; not measured lower): a
    // loudspeaker's distortion follows its predictors only loosely (the wrong knee, a wandering drive),
    // and at 0.3 half the bands of the corpus's tanh loudspeaker went unused. Measured with the gate below
    // (physical corpus, CPU RLS 1024, against 0.3 and no excess models): tanh at 18 dB SDR steady ERLE
    // 19.4 -> 25.5 dB (WebRTC 0.3: 25.0), mild tanh 22.4 -> 23.2, a device's chain at RT60 0.4 s 28.3 ->
    // 33.1 (GPU RLS 4096: 20.2 -> 27.0, 26.3 -> 27.4, at RT60 0.2 s 31.3 -> 34.6); near-end SNR in double
    // talk unchanged or up to 1.1 dB better; linear rooms within 0.5 dB.
    double farEndMinCorrelation = 0.1;
    // ... and a far-end model is used at all only where its bands' correlations average at least this.
    // Over 2 s a band's correlation with an unrelated output wanders by about 0.1, so at 0.1 a few bands
    // of a far end that plays no echo (a headset's line noise) passed by chance, and with the weak
    // filter's margin (no echo: no reach) suppressed the near end; their mean stays within 0.05 of 0,
    // where a loudspeaker's distortion averages 0.25 to 0.45 (measured on the corpus). A headset's near
    // end over a line's speech-shaped noise at -50 dBFS: near-end SNR after the fit 48.3 dB without this
    // gate, 122.0 with it (the canceller adds nothing).
    double farEndMinMeanCorrelation = 0.15;
    // Where the linear filter's reach is at least this, it models the echo: the far-end models' band
    // correlation rises from farEndMinCorrelation to gains.minCorrelation at strongFilterDb, and the
    // loudspeaker-excess models are not used. Without this a converged filter's output (a linear room
    // at 14 ms, 256 taps, the short corpus's double-talk file) lost 3.6 dB of steady ERLE to the
    // excess models (43.9 -> 40.3) and 5 dB with the low correlation too, in suppression of its noise.
    double confidentFilterDb = 35.0;
    // The held reach (peak, falling 2 dB/s) outlasts double talk, where the near end fills the frames. It
    // also outlasted an echo-path change, and the weak filter's margin stayed narrow for seconds while
    // the filter re-converged. The two differ in what the output follows: after a change it is echo,
    // whose band powers follow the far end's (mean correlation 0.45 to 0.6 within 0.3 s, measured on the
    // corpus's path change with the Kalman filter), in double talk the near end, which does not (0 to
    // 0.17). So where the frames show reachLostDb less than the held reach and the far-end model's mean
    // correlation is at least reachLostCorrelation, the reach falls at reachLostFallDbPerSecond.
    double reachLostDb = 10.0;
    double reachLostCorrelation = 0.4;
    double reachLostFallDbPerSecond = 20.0;
    // The canceller's own verdict that the echo path changed (echoPathChanged(): its PathChangeDetector,
    // which restarts the linear filter) is a second witness. For pathChangeSeconds after it, the reach
    // drops at once to what the frames show, so that the far-end models take the echo with the weak
    // filter's margin while the filter re-learns. Three conditions must hold: the held reach is at least
    // confidentFilterDb, the frames show reachLostDb less than it, and the far-end model's mean
    // correlation is at least pathChangeCorrelation. No one witness is enough on its own:
    // - The detector also fires in double talk: 6 times in the corpus's 0.4 s room at 0 dB echo-to-near-end.
    //   There the correlation stayed at -0.03 to 0.15. After the speech path change it was 0.21 to 0.30 in
    //   the half second after the detection, below reachLostCorrelation.
    // - A filter that never reached confidentFilterDb already has wide margins. Its output in double talk
    //   holds enough echo to correlate: NLMS at 4096 taps lost 8 dB of near-end SNR in the 0.4 s room's
    //   double talk (22.9 -> 14.8) without the confidence condition.
    // Measured on the physical corpus, CPU Kalman filter at 4096 taps, against no such drop:
    // - the speech path change: steady ERLE 24.8 -> 28.8 dB, re-convergence to 20 dB 1.65 -> 0.45 s;
    // - every other file the same, CPU RLS at 1024 taps on every speech file too;
    // - at a correlation of 0.2, one double-talk file lost 0.3 dB of near-end SNR;
    // - on the detector alone, the 0.4 s room's double talk went from 31.6 to 19.5 dB.
    // 0.25 at first; 0.3 since 2026-11-28: on the short corpus (5 s files) double talk starts 2.7 s into
    // the call, where the Kalman filter's output still holds echo that correlates, and at 0.25 the drop took
    // that file's near-end SNR after the fit from 28.9 to 13.6 dB (28.8 at 0.3). At 0.3 the physical
    // corpus's figures are all the same as at 0.25, the path change's 28.8 dB included; at 0.35 the music
    // under a near-end talker lost 1.1 dB.
    double pathChangeCorrelation = 0.3;
    double pathChangeSeconds = 0.5;
    // The room's echo beyond the linear filter's taps (a 64 ms filter in a room of RT60 0.3 to 0.5 s
    // leaves a tail 15 to 25 dB below the echo, which neither the linear model, whose estimate ends where
    // the taps end, nor the far-end models, whose predictor is the far end now, follow): a model whose
    // predictor is the far end's band power from a filter length ago, decaying at the room's rate. Used
    // only where the linear filter's reach is at least beyondFilterMinReachDb (a filter that models the
    // echo; where it does not, the far-end models' wide margin takes the echo anyway, and with no echo at
    // all a line's noise must not pass for a tail) and, like the far-end models, in bands whose
    // correlation is at least the far-end models' and whose mean is at least farEndMinMeanCorrelation.
    // Measured (quell-eval, physical corpus, CPU RLS 1024, steady ERLE with suppression, at 2813edd
    // against 42a04e9): RT60 0.3 s 12.8 -> 21.0 dB, 0.4 s 16.7 -> 24.4, 0.5 s 11.5 -> 22.2, 0.2 s 25.0
    // -> 26.4; near-end SNR after the fit in double talk within 0.7 dB.
    bool beyondFilterModel = true;
    double beyondFilterMinReachDb = 10.0;
    // An echo burst: the linear filter that reached far lets echo through for a moment (a new far-end
    // talker of a stereo far end, whose pair of paths the last one left undetermined: 6 to 20 dB of
    // reduction for 100 to 300 ms; a filter catching up with a change). The held reach stands through it
    // (it is too short to move it), and the trackers take it for a near end. What tells it from a near end
    // is how the output moves: with the far end, as the microphone does (BandFollowing over
    // echoBurstSeconds, frames weighted by their power). Where the frames show reachLostDb less than the
    // held reach while the far end plays, the output's band powers follow the far end's with a mean
    // correlation of at least echoBurstCorrelation and at least echoBurstMicShare of the microphone's, and
    // the far-end model's slow mean correlation passes farEndMinMeanCorrelation, each band whose own short
    // correlation is at least echoBurstBandCorrelation is taken for echo entirely (suppressed to the floor,
    // comfort noise in its place).
    // Measured on the physical corpus (this machine, CPU defaults, steady ERLE; Tests/eval/results/
    // 2026-12-07/echo-burst): a stereo far end of two talkers 27.2 -> 31.2 dB, with two mics 27.9 -> 32.7,
    // under a near-end talker 22.8 -> 27.1 (the near end after the fit 27.9 both), music 31.0 -> 33.9;
    // every near-end figure within 0.1 dB (the 10 dB-ENR path change in double talk 6.84 -> 6.99).
    // - Without the slow correlation's gate a near end over a far end of line noise (no echo) was
    //   suppressed (near-end SNR after the fit 122 -> 40 dB), and one in double talk (RT60 0.4 s: 40.7 ->
    //   16.1): the short correlation passes 0.5 now and then in double talk, the slow one stays near 0.
    // - The microphone's share: at a near end's onset under echo 6 dB louder (the Kalman filter) the
    //   output's short correlation reached 0.55 where the microphone's was 0.72; in the bursts the output's
    //   is close to the microphone's. At 0.75 that file lost 0.9 dB of near end after the fit, at 0.8 none;
    //   at 0.85 the stereo file lost another 0.3 dB of ERLE.
    // - The coherence of the output with the echo estimate (BandCoherence over echoBurstSeconds, mean over
    //   the bands) must be at least echoBurstCoherence. Without it, two CI tests (the PipeWire SPA module and
    //   the LV2 ports, 48 kHz) whose near end has the far end's own amplitude envelope (Tests/support/
    //   Signals.h colouredNoise: the same sine in both) lost 11.5 and 12.2 dB of it: a near end whose band
    //   powers move with the far end's cannot be told from echo by how it moves, but it has no phase in
    //   common with the echo estimate. Measured (a trace of every frame the far end played): in the SPA
    //   test's frames the rule took, the mean coherence was 0.013 to 0.041; in the stereo double talk's
    //   burst 0.09 to 0.38 (median 0.20); in that file's double-talk frames below the held reach at most
    //   0.18 (90 % under 0.094), which the other conditions keep out. At 0.1 the corpus (steady ERLE) kept
    //   most of the rule's gain: stereo 27.2 -> 31.1 dB (31.2 without the coherence), two mics 27.9 ->
    //   31.8 (32.7), stereo double talk 22.8 -> 26.7 (27.1), music 31.0 -> 31.3 (33.9); every near-end
    //   figure as without the rule but the path change's in double talk (after the fit 6.84 -> 6.99).
    bool echoBurst = true;
    double echoBurstSeconds = 0.15;
    double echoBurstCorrelation = 0.5;
    double echoBurstMicShare = 0.8;
    double echoBurstBandCorrelation = 0.3;
    double echoBurstCoherence = 0.1;
    bool operator==(const SuppressorSettings&) const = default;
};

class ResidualEchoSuppressor {
public:
    // Throws std::invalid_argument on bad settings. spec: the rate.
    // filterSamples: the linear filter's length per far-end channel, where the echo it cannot model by its
    // length begins (settings.beyondFilterModel); 0 = no such model. The far end's alignment lag is not
    // subtracted: it is found within the first taps, and a tail taken a few ms late is still the tail.
    void prepare(const SuppressorSettings& settings, const dsp::ProcessSpec& spec, int filterSamples = 0);
    void reset();
    // mic = d (as the linear filter saw it), error = e (the linear filter's output), farEnd = the far end
    // as aligned for the linear filter (the channels' sum for several); out = the suppressed output,
    // delayed by latencySamples(). out may alias error or mic. Any block size.
    void process(std::span<const float> mic, std::span<const float> error, std::span<const float> farEnd,
                 std::span<float> out);

    // The canceller found that the echo path changed and restarted its linear filter (see
    // SuppressorSettings::pathChangeCorrelation).
    void echoPathChanged() { pathChangeFrames_ = pathChangeWindowFrames_; }
    void setMaxAttenuationDb(double db);
    void setComfortNoise(bool on) { comfortNoiseOn_ = on; }

    int latencySamples() const { return frame_ - 1; }
    int frameSize() const { return frame_; }
    // The residual-to-echo-estimate ratio in use (linear model), mean over the bands, in dB.
    double leakDb() const;
    // The residual-to-far-end ratio in use (the far-end model of each band's power), mean over the bands, in dB.
    double farEndGainDb() const;
    // Mean gain over the bins of the last frame (1: nothing suppressed).
    float lastMeanGain() const { return meanGain_; }
    // The linear filter's reduction of the microphone (above the noise) while the far end plays, held at its
    // recent peak, in dB.
    double linearReachDb() const { return reachDb_; }
    // Frames whose linear output was louder than the microphone and were replaced by it.
    long fallbackFrames() const { return fallbackFrames_; }
    // Frames taken for an echo burst (SuppressorSettings::echoBurst).
    long echoBurstFrames() const { return echoBurstFrames_; }

private:
    void processFrame();
    // The far-end models' band predictors for this frame (from bandFar_, bandFarNow_ and their totals).
    void updateFarPredictors(double farTotal, double farTotalNow);

    SuppressorSettings settings_{};
    int frame_ = 128, hop_ = 64, bins_ = 65;
    std::unique_ptr<dsp::FftPlan<float>> fft_;
    std::vector<float> window_;                // sqrt periodic Hann, analysis and synthesis
    std::vector<float> micIn_, errIn_, farIn_; // the last N input samples
    std::vector<float> overlap_, ready_;       // overlap-add accumulator; the hop being played out
    std::vector<std::complex<float>> spectrumE_, spectrumD_, spectrumX_, spectrumY_;   // Y: the echo estimate D - E
    std::vector<float> powerE_, smoothedE_, echoTail_, farTail_, gain_;
    std::vector<std::size_t> bandOf_;          // bin -> band
    std::vector<int> binsInBand_;
    std::vector<double> bandOut_, bandEcho_, bandFar_, bandEchoNow_, bandFarNow_;
    std::vector<double> bandFloor_, bandRecent_, bandSmoothed_, bandFarResidual_, bandMic_;
    // How the output (over 16 ms) and the microphone follow the far end (with its tail), right now.
    BandFollowing outputFollowing_, micFollowing_;
    // How much of the linear output is the sound of the linear filter's echo estimate (microphone less output).
    BandCoherence outputCoherence_;
    bool echoBurstNow_ = false;
    long echoBurstFrames_ = 0;
    ResidualGainTracker linearGain_;
    // The far-end models (see updateFarPredictors): a tracker, its predictor and present power per band.
    struct FarModel {
        ResidualGainTracker gain;
        std::vector<double> predictor, present;
    };
    // 0: each band's far end; 1: the whole far end; 2, 3: the loudspeaker's excesses (excess_).
    std::array<FarModel, 2 + LoudspeakerExcessSpectrum::kClippers> far_;
    // The room's tail beyond the linear filter's taps: the far end's band power from filterSamples ago,
    // decaying at the room's rate (history_: a ring of the bands' powers, frames x bands).
    FarModel beyond_;
    std::vector<double> history_;
    std::size_t historyFrames_ = 0, historyAt_ = 0;
    LoudspeakerExcessSpectrum excess_;
    double recent_ = 0.25, farMargin_ = 2.0, tailMargin_ = 2.0;
    double reachDb_ = 0.0, recentReductionDb_ = 0.0, reachFallDb_ = 0.04, reachLostFallDb_ = 0.4;
    FarEndPlay farPlay_{1e-20};
    ComfortNoise noise_;
    int filled_ = 0;
    float rho_ = 0.0f, floorGain_ = 0.01f, fallbackRatio_ = 1.12f, fallbackNearEndRatio_ = 4.0f;
    double nearEndAboveFloor_ = 10.0;
    float meanGain_ = 1.0f;
    long fallbackFrames_ = 0;
    int pathChangeFrames_ = 0, pathChangeWindowFrames_ = 0;   // frames left of the window after echoPathChanged()
    bool comfortNoiseOn_ = true;
};

} // namespace quell::aec
