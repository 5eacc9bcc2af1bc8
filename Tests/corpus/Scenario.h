// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One echo-cancellation test case of the corpus: its parameters (Scenario) and the rendered signals
// (RenderedScenario). Rendering is deterministic for a given scenario (seeded), apart from what the
// installed espeak-ng version speaks.
//
// Signal model, per microphone m:
//   ref_l         = far-end speech, noise or music (musicWithoutHighs), band-limited to 300-3400 Hz
//                   when narrowband, plus line noise at lineNoiseDbfs when set
//   loudspeaker_l = softClip(ref_l)                     (identity when distortionDb == 0), or the
//                   device chain (deviceChain: compressor, clipper, loudspeaker distortion, rattle and
//                   a wandering delay: an echo only weakly coherent with the far end)
//   echo_m        = sum_l  delay(loudspeaker_l, D) * h_lm   (h_lm switches to h'_lm at changeTime;
//                   none at all when echoCoupled is false, as with a headset)
//   near_m        = near-end talker's dry speech * g_m  (the talker's own room response to mic m)
//   noise_m       = pink noise at the echo-to-noise ratio
//   mic_m         = near_m + echo_m + noise_m
// Levels (before levelDb): ref at -26 dBFS active level, echo at -32 dBFS on mic 1 (a hands-free device couples its
// loudspeaker strongly), near-end speech at nearToEchoDb relative to the echo. "Active" power leaves
// out 20 ms frames more than 40 dB below the loudest (speech pauses); see CorpusSignals.h.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "corpus/CorpusSignals.h"
#include "corpus/RoomSimulator.h"

namespace quell::corpus {

enum class Excitation { Speech, WhiteNoise, PinkNoise, Music, None };
const char* toString(Excitation e);

struct Scenario {
    std::string name;
    std::string description;
    Excitation excitation = Excitation::Speech;
    double seconds = 12.0;
    int sampleRate = 16000;
    double rt60 = 0.3;              // target T30, seconds (imageMethodReflection)
    double enrDb = 30.0;            // echo-to-noise ratio, active powers, mic 1
    double bulkDelayMs = 0.0;       // loudspeaker-path latency in front of the room response
    bool pathChange = false;        // echo path switches at seconds / 2 (mics and loudspeakers moved)
    bool doubleTalk = false;        // near-end talker in the second half, over the far end
    bool nearEndOnly = false;       // no far-end talker: ref carries at most line noise, the near end talks throughout
    double nearToEchoDb = 0.0;      // double talk: near-end speech vs echo, active powers
    // Far-end line noise (a real line, a remote comfort-noise generator), dBFS RMS, added to every
    // far-end channel for the whole file; NaN: none. Speech-shaped (the far-end voice's long-term
    // spectrum) or white.
    double lineNoiseDbfs = std::numeric_limits<double>::quiet_NaN();
    bool lineNoiseSpeechShaped = false;
    // false: nothing the loudspeaker plays reaches the microphone (a headset), though ref still carries it.
    bool echoCoupled = true;
    // The far end as a narrowband call: band-limited to 300-3400 Hz, nothing above 4 kHz.
    bool narrowband = false;
    // The loudspeaker as a small device drives it: compressor, clipper, loudspeaker distortion, rattle and
    // a delay that wanders by a fraction of a millisecond (deviceChain in CorpusSignals.h).
    bool deviceChain = false;
    // The near end talks alone first (far end silent but for its line noise), the far end starts at mid-file.
    bool lateFarEnd = false;
    double nearToNoiseDb = 30.0;    // near-end-only scenarios: near-end speech vs noise
    // Every signal (far end, echo, near end, noise) this many dB from the levels above, the ratios kept:
    // a quiet call (a phone at a low volume, a quiet line), the far end at -26 + levelDb dBFS.
    double levelDb = 0.0;
    double distortionDb = 0.0;      // loudspeaker soft clip, signal-to-distortion ratio; 0 = linear
    int loudspeakers = 1;           // 2: stereo far end (a spaced pair recording of a far-end room)
    // With two loudspeakers: one far-end signal in both channels (a mono call captured as a stereo
    // loopback, a mono track on a stereo bus), played by both.
    bool monoInBothChannels = false;
    int mics = 1;
    double micDistance = 0.8;       // loudspeaker (pair centre) to microphone, metres
    // 0: room responses run to about -60 dB (the physical tail; at RT60 0.3 s about 15 dB of the echo
    // energy lies beyond 64 ms, which bounds what a 1024-tap filter at 16 kHz can cancel). Else the echo
    // paths are cut at this length with a 5 ms raised-cosine fade: an echo a filter that long can model
    // entirely.
    double rirMaxMs = 0.0;
    std::string farVoice = "en+m3";
    std::string farVoice2 = "en+f2"; // second far-end talker (alternates sentences in stereo scenarios)
    std::string nearVoice = "en+f3";
    std::uint32_t seed = 1;
    bool writeNear = true;          // the demo has no near-end talker and leaves near.wav out
};

struct RenderedScenario {
    Scenario scenario;
    Point3 roomSize;
    double reflection = 0.0;
    std::vector<Point3> loudspeakers, mics, loudspeakersAfter, micsAfter;
    Point3 nearTalker;
    double changeTime = -1.0; // seconds, -1 when the path does not change
    double softClipDrive = 0.0;

    // Planar signals: ref has one channel per loudspeaker; the others one per microphone.
    std::vector<std::vector<double>> ref, near, echo, noise, mic;
    // Room responses as applied (echo gain included, bulk delay not), index l * mics + m.
    std::vector<std::vector<double>> rirBefore, rirAfter;

    // Measured on the rendered signals.
    double measuredEnrDb = 0.0;
    double measuredNearToEchoDb = 0.0;
    double measuredSdrDb = 0.0;        // loudspeaker signal-to-distortion ratio (inf when linear)
    double rirT30 = 0.0;               // of rirBefore[0] before any cut, seconds (0 if not measurable)
    double rirT20 = 0.0;
    // Energy of rirBefore[0] (as applied, so after any cut) beyond 64 and 256 ms, bulk delay excluded:
    // the part of the echo a filter of 1024 or 4096 taps at 16 kHz cannot model.
    double tailBeyond64msDb = 0.0;
    double tailBeyond256msDb = 0.0;
    double directPathMs = 0.0;         // loudspeaker 1 to mic 1, bulk delay included
    // Activity (seconds): the far end as sent (ref 1), its echo at mic 1 (bulk delay and reverberation
    // included), the near end at mic 1, and double talk = echo and near end both active.
    std::vector<Interval> farActive, echoActive, nearActive, doubleTalk;
};

RenderedScenario render(const Scenario& scenario);

// The scenarios of the corpus: the full set of issue 7, or a short CI-sized one (a few scenarios of
// about 5 s).
std::vector<Scenario> corpusScenarios(bool shortVersion);
// The same scenario (room, voices, sentences) with every signal levelDb (< 0) from its levels, named
// and described as such.
Scenario quieterTwin(const Scenario& scenario, double levelDb);
// The bundled demo of Resources/demo: far-end speech in a small, fairly dead room at 40 dB ENR.
Scenario demoScenario();

} // namespace quell::corpus
