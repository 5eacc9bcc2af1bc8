#pragma once
// Residual echo suppression after the linear filter: a gain per frequency bin that takes out the echo
// the adaptive filter leaves (the room's tail beyond its taps, loudspeaker distortion, the error of a
// filter still converging or re-converging), with comfort noise filling what it removes.
//
// Frames: short-time spectra of N = 2H samples (H = hop, about 4 ms), square-root periodic Hann windows
// for analysis and synthesis (their product overlap-adds to exactly 1 at 50 %, so gains of 1 give the
// input back, delayed). The output is the input delayed by latencySamples() = N - 1, exactly.
//
// Residual model: R(k) = leak * Yr(k), where Yr is the power of the linear filter's echo estimate
// Y = D - E with a reverberant tail (Yr(t) = |Y(t)|^2 + rho Yr(t - 1), rho from `tailSeconds`), and
// `leak` (one number, all bins) is the residual-to-estimate ratio measured on frames where the echo
// estimate stands clearly above the noise floor: (output power - noise floor) / Yr, both averaged over
// `leakAveragingSeconds`, tracked in dB, down at once and up by at most `leakRiseDbPerSecond`. Double
// talk raises that ratio too, but slowly and only while it lasts; a filter that converges lowers it at
// once. Gain per bin: g = max(floor, 1 - overSubtraction * max(0, R / E_smoothed - masking)), falling at
// once and recovering over two frames; `floor` = -maxAttenuationDb. Bins where the near end or the noise
// is much louder than the residual keep g = 1 exactly, so a converged filter's output passes untouched.
//
// Threading: prepare() off the real-time thread; process() and the setters from one thread at a time;
// no allocation after prepare.
#include <complex>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "aec/ComfortNoise.h"
#include "dsp/Fft.h"

namespace quell::aec {

struct SuppressorSettings {
    bool enabled = true;               // off: no suppressor at all (and no latency)
    double frameSeconds = 0.008;       // N, rounded to a power of two (128 at 16 kHz)
    double maxAttenuationDb = 12.0;    // 0: gains of 1 (the latency stays)
    bool comfortNoise = true;
    double tailSeconds = 0.3;          // RT60 assumed for the reverberant part of the residual
    double overSubtraction = 3.0;
    // Residual below this fraction of the output's power is left alone (masked by the near end and the
    // noise): 0.2 = 7 dB.
    double masking = 0.2;
    double leakRiseDbPerSecond = 6.0;
    double leakAveragingSeconds = 0.05;
};

class ResidualEchoSuppressor {
public:
    // Throws std::invalid_argument on bad settings.
    void prepare(const SuppressorSettings& settings, int sampleRate);
    void reset();
    // mic = d (as the linear filter saw it), error = e (the linear filter's output); out = the suppressed
    // output, delayed by latencySamples(). out may alias error or mic. Any block size.
    void process(std::span<const float> mic, std::span<const float> error, std::span<float> out);

    void setMaxAttenuationDb(double db);
    void setComfortNoise(bool on) { comfortNoiseOn_ = on; }

    int latencySamples() const { return frame_ - 1; }
    int frameSize() const { return frame_; }
    // The residual-to-echo-estimate ratio in use, in dB.
    double leakDb() const { return leakDb_; }
    // Mean gain over the bins of the last frame (1: nothing suppressed).
    float lastMeanGain() const { return meanGain_; }

private:
    void processFrame();

    SuppressorSettings settings_{};
    int frame_ = 128, hop_ = 64, bins_ = 65;
    std::unique_ptr<dsp::FftPlan<float>> fft_;
    std::vector<float> window_;            // sqrt periodic Hann, analysis and synthesis
    std::vector<float> micIn_, errIn_;     // the last N input samples
    std::vector<float> overlap_, ready_;   // overlap-add accumulator; the hop being played out
    std::vector<std::complex<float>> spectrumE_, spectrumD_;
    std::vector<float> powerE_, smoothedE_, echoTail_, gain_;
    ComfortNoise noise_;
    int filled_ = 0;
    float rho_ = 0.0f, floorGain_ = 0.25f, leakRisePerFrame_ = 0.0f;
    double leakDb_ = 0.0;
    double excessAverage_ = 0.0, tailAverage_ = 0.0, averaging_ = 0.01;
    float meanGain_ = 1.0f;
    bool comfortNoiseOn_ = true;
};

} // namespace quell::aec
