// SPDX-License-Identifier: GPL-3.0-or-later
// The scenario lists of the corpus (issue 7) and the bundled demo (issue 2).
#include <cmath>
#include <string>

#include "corpus/Scenario.h"

namespace quell::corpus {
namespace {

std::string rtTag(double rt60) { return "rt" + std::to_string(static_cast<int>(rt60 * 1000.0 + 0.5)); }
std::string enrTag(double enr) { return "enr" + std::to_string(static_cast<int>(enr)); }
std::string signedTag(double v)
{
    const int i = static_cast<int>(std::lround(v));
    std::string tag = i > 0 ? "+" : "";
    tag += std::to_string(i);
    return tag;
}
std::string lineTag(const Scenario& s)
{
    return std::string("line-") + (s.lineNoiseSpeechShaped ? "speech" : "white") + std::to_string(static_cast<int>(std::lround(-s.lineNoiseDbfs)));
}
std::string lineText(const Scenario& s)
{
    return std::string(s.lineNoiseSpeechShaped ? "speech-shaped" : "white") + " line noise at "
           + std::to_string(static_cast<int>(std::lround(s.lineNoiseDbfs))) + " dBFS on the far end";
}

Scenario make(Excitation e, double rt60, double enr, double seconds)
{
    Scenario s;
    s.excitation = e;
    s.rt60 = rt60;
    s.enrDb = enr;
    s.seconds = seconds;
    return s;
}

// A lone near-end talker whose far end carries only line noise, with no echo path (a headset).
Scenario nearEndOverLineNoise(double levelDbfs, bool speechShaped, double seconds)
{
    Scenario s = make(Excitation::None, 0.3, 30, seconds);
    s.nearEndOnly = true;
    s.lineNoiseDbfs = levelDbfs;
    s.lineNoiseSpeechShaped = speechShaped;
    s.echoCoupled = false;
    return s;
}

// Speech far end, double talk in the second half at the given echo-to-near-end ratio.
Scenario doubleTalk(double rt60, double echoToNearDb, double seconds)
{
    Scenario s = make(Excitation::Speech, rt60, 30, seconds);
    s.doubleTalk = true;
    s.nearToEchoDb = -echoToNearDb;
    return s;
}

// A stereo far end in a 0.3 s room at 30 dB ENR: one signal in both channels, or (speech) two far-end
// talkers picked up by a spaced pair; with a near-end talker in the second half or not.
Scenario twoChannels(Excitation excitation, bool oneSignal, bool doubleTalk, double seconds)
{
    Scenario s = make(excitation, 0.3, 30, seconds);
    s.loudspeakers = 2;
    s.monoInBothChannels = oneSignal;
    s.doubleTalk = doubleTalk;
    return s;
}

// Names say what differs: excitation, RT60 (ms), ENR (dB), then delay, change, double talk, distortion,
// channels.
void finish(Scenario& s, std::uint32_t seed)
{
    s.seed = seed;
    if (s.nearEndOnly) {
        s.name = "near-only-" + rtTag(s.rt60);
        s.description = "near-end talker alone; noise " + std::to_string(static_cast<int>(s.nearToNoiseDb))
                        + " dB below the near end; ";
        if (std::isfinite(s.lineNoiseDbfs)) {
            s.name += "-" + lineTag(s);
            s.description += lineText(s) + (s.echoCoupled ? " (echoed)" : ", no echo path (a headset)");
        } else {
            s.description += "far end silent";
        }
        return;
    }
    s.name = std::string(toString(s.excitation)) + "-" + rtTag(s.rt60) + "-" + enrTag(s.enrDb);
    s.description = std::string(toString(s.excitation)) + " far end, RT60 " + std::to_string(s.rt60).substr(0, 4)
                    + " s, ENR " + std::to_string(static_cast<int>(s.enrDb)) + " dB";
    if (s.bulkDelayMs > 0.0) {
        s.name += "-d" + std::to_string(static_cast<int>(s.bulkDelayMs));
        s.description += ", bulk delay " + std::to_string(static_cast<int>(s.bulkDelayMs)) + " ms";
    }
    if (s.pathChange) {
        s.name += "-change";
        s.description += ", echo path change halfway";
    }
    if (s.doubleTalk) {
        s.name += "-dt";
        s.description += ", double talk in the second half";
        if (s.nearToEchoDb != 0.0) {
            s.name += "-etn" + signedTag(-s.nearToEchoDb);
            s.description += " at " + signedTag(-s.nearToEchoDb) + " dB echo-to-near-end";
        }
    }
    if (s.distortionDb > 0.0) {
        // (25 dB, the first nonlinear scenarios, keeps its plain name.)
        s.name += s.distortionDb == 25.0 ? "-nl" : "-nl" + std::to_string(static_cast<int>(s.distortionDb));
        s.description += ", loudspeaker soft clip (tanh) at " + std::to_string(static_cast<int>(s.distortionDb)) + " dB SDR";
    }
    if (s.deviceChain) {
        s.name += "-device";
        s.description += ", a device's playback chain (compressor, clipper, loudspeaker distortion, rattle, wandering "
                         "delay): echo only weakly coherent with the far end";
    }
    if (s.narrowband) {
        s.name += "-nb";
        s.description += ", narrowband far end (300-3400 Hz)";
    }
    if (s.lateFarEnd) {
        s.name += "-late";
        s.description += ", the near end talks alone first, the far end starts at mid-file";
    }
    if (std::isfinite(s.lineNoiseDbfs)) {
        s.name += "-" + lineTag(s);
        s.description += ", " + lineText(s);
    }
    if (s.loudspeakers == 2 && s.monoInBothChannels) {
        s.name += "-dualmono";
        s.description += ", a stereo far end with one signal in both channels, played by two loudspeakers";
    } else if (s.loudspeakers == 2) {
        s.name += s.mics == 2 ? "-stereo2mic" : "-stereo";
        s.description += s.mics == 2 ? ", stereo far end, two mics" : ", stereo far end, one mic";
    }
}

} // namespace

std::vector<Scenario> corpusScenarios(bool shortVersion)
{
    std::vector<Scenario> list;
    const auto S = Excitation::Speech, W = Excitation::WhiteNoise, P = Excitation::PinkNoise;
    if (shortVersion) {
        const double T = 5.0;
        list.push_back(make(S, 0.2, 30, T));
        auto c = make(S, 0.3, 30, T);
        c.bulkDelayMs = 200;
        c.pathChange = true;
        list.push_back(c);
        auto dt = make(S, 0.3, 30, T);
        dt.doubleTalk = true;
        list.push_back(dt);
        list.push_back(make(P, 0.3, 10, T));
        // A noise case with delay and change, so a machine without espeak-ng (--no-speech) still has one.
        auto wc = make(W, 0.2, 30, T);
        wc.bulkDelayMs = 100;
        wc.pathChange = true;
        list.push_back(wc);
        auto st = make(S, 0.3, 30, T);
        st.loudspeakers = 2;
        list.push_back(st);
        auto alone = make(Excitation::None, 0.3, 30, T);
        alone.nearEndOnly = true;
        list.push_back(alone);
        // The real-calls cases (issue 12): a lone near end over a far end that carries only line noise
        // (no echo path), double talk at echo-to-near-end ratios of -6 and +6 dB, an overdriven
        // loudspeaker, a device's weakly coherent echo, a narrowband far end (the twin of the first
        // scenario, band-limited), and a far end that starts after the near end talked alone.
        for (const auto& [level, shaped] : {std::pair{-50.0, false}, std::pair{-70.0, true}})
            list.push_back(nearEndOverLineNoise(level, shaped, T));
        for (const double etn : {-6.0, 6.0})
            list.push_back(doubleTalk(0.3, etn, T));
        {
            auto nl = make(S, 0.3, 30, T);
            nl.distortionDb = 18.0;
            list.push_back(nl);
            auto device = make(S, 0.3, 40, T);
            device.deviceChain = true;
            list.push_back(device);
            auto late = make(S, 0.3, 30, T);
            late.lateFarEnd = true;
            late.lineNoiseDbfs = -70.0;
            list.push_back(late);
            // Music without highs (a few spectral lines held for seconds, nothing above 5 kHz).
            list.push_back(make(Excitation::Music, 0.3, 30, T));
            // A stereo far end with one voice in both channels, under a near-end talker.
            list.push_back(twoChannels(S, true, true, T));
        }
    } else {
        const double T = 12.0;
        // Linear rooms over the RT60 range, speech at 30 dB ENR, male and female far ends.
        for (const double rt : {0.1, 0.2, 0.3, 0.4, 0.5})
            list.push_back(make(S, rt, 30, T));
        list.push_back(make(S, 0.2, 10, T));
        list.push_back(make(S, 0.5, 10, T));
        // Noise excitation.
        list.push_back(make(W, 0.3, 30, T));
        list.push_back(make(W, 0.3, 10, T));
        list.push_back(make(P, 0.3, 30, T));
        list.push_back(make(P, 0.3, 10, T));
        // Bulk delays.
        for (const double d : {50.0, 150.0, 300.0, 500.0}) {
            auto s = make(S, d < 200 ? 0.2 : 0.3, 30, T);
            s.bulkDelayMs = d;
            list.push_back(s);
        }
        // Echo path change halfway.
        for (const auto e : {S, P}) {
            auto s = make(e, 0.3, 30, T);
            s.pathChange = true;
            list.push_back(s);
        }
        // Double talk in the second half.
        for (const double rt : {0.2, 0.4}) {
            auto s = make(S, rt, 30, T);
            s.doubleTalk = true;
            list.push_back(s);
        }
        {
            auto s = make(S, 0.3, 10, T);
            s.doubleTalk = true;
            list.push_back(s);
        }
        // Mild loudspeaker nonlinearity.
        {
            auto s = make(S, 0.3, 30, T);
            s.distortionDb = 25.0;
            list.push_back(s);
        }
        // Stereo far end.
        {
            auto s = make(S, 0.3, 30, T);
            s.loudspeakers = 2;
            list.push_back(s);
            s.mics = 2;
            list.push_back(s);
            auto p = make(P, 0.3, 30, T);
            p.loudspeakers = 2;
            list.push_back(p);
        }
        // A lone near-end talker (what the canceller must not damage).
        {
            auto s = make(Excitation::None, 0.3, 30, T);
            s.nearEndOnly = true;
            list.push_back(s);
        }
        // Everything at once.
        {
            auto s = make(S, 0.3, 10, T);
            s.bulkDelayMs = 250;
            s.pathChange = true;
            s.doubleTalk = true;
            s.distortionDb = 25.0;
            list.push_back(s);
        }
        // The real-calls cases (issue 12). A lone near end over a far end that carries only line noise,
        // white and speech-shaped, from -90 to -50 dBFS, with no echo path (a headset user's far end).
        for (const double level : {-90.0, -70.0, -50.0})
            for (const bool shaped : {false, true})
                list.push_back(nearEndOverLineNoise(level, shaped, T));
        // Double talk at echo-to-near-end ratios of -6, 0 and +6 dB in rooms of RT60 0.2 to 0.4 s.
        for (const auto& [rt, etn] : {std::pair{0.2, -6.0}, std::pair{0.3, 0.0}, std::pair{0.3, 6.0}, std::pair{0.4, 6.0},
                                      std::pair{0.4, -6.0}})
            list.push_back(doubleTalk(rt, etn, T));
        // An overdriven loudspeaker (tanh) at two drive levels, and a device's playback chain.
        for (const double sdr : {18.0, 10.0}) {
            auto s = make(S, 0.3, 30, T);
            s.distortionDb = sdr;
            list.push_back(s);
        }
        for (const double rt : {0.2, 0.4}) {
            auto s = make(S, rt, 40, T);
            s.deviceChain = true;
            list.push_back(s);
        }
        // A far end that starts at mid-file after the near end talked alone over its line noise.
        {
            auto s = make(S, 0.3, 30, T);
            s.lateFarEnd = true;
            s.lineNoiseDbfs = -70.0;
            list.push_back(s);
        }
        // Music without highs as the far end (a few spectral lines held for seconds, nothing above 5 kHz):
        // alone, and with a near-end talker over it (a singer's microphone hearing the backing track).
        {
            auto s = make(Excitation::Music, 0.3, 30, T);
            list.push_back(s);
            s.doubleTalk = true;
            list.push_back(s);
        }
        // A stereo far end with one signal in both channels (a mono call on a stereo bus): speech alone,
        // speech under a near-end talker, pink noise; and a stereo far end of two talkers under one.
        list.push_back(twoChannels(S, true, false, T));
        list.push_back(twoChannels(S, true, true, T));
        list.push_back(twoChannels(P, true, false, T));
        list.push_back(twoChannels(S, false, true, T));
    }
    // Voices vary across scenarios; the near end is always the other sex from the far end.
    const char* male[] = {"en+m3", "en-us+m1", "en+m5", "en-gb-x-rp+m2"};
    const char* female[] = {"en+f3", "en-us+f2", "en+f4", "en-gb-x-rp+f1"};
    // Device geometry varies too: loudspeaker-to-mic distances of a laptop, a speakerphone and a TV.
    const double micDistances[] = {0.3, 0.5, 0.8, 0.4, 0.65};
    for (std::size_t i = 0; i < list.size(); ++i) {
        list[i].micDistance = micDistances[i % 5];
        const bool maleFar = i % 2 == 0;
        list[i].farVoice = maleFar ? male[i % 4] : female[i % 4];
        list[i].farVoice2 = maleFar ? female[(i + 1) % 4] : male[(i + 1) % 4];
        list[i].nearVoice = maleFar ? female[(i + 2) % 4] : male[(i + 2) % 4];
        finish(list[i], static_cast<std::uint32_t>(1000 + i));
    }
    // A narrowband far end: the twin of a full-band scenario (same room, voices and sentences),
    // band-limited, so the two figures compare the band alone.
    const std::string twin = shortVersion ? "speech-rt200-enr30" : "speech-rt300-enr30";
    for (std::size_t i = 0; i < list.size(); ++i)
        if (list[i].name == twin) {
            Scenario nb = list[i];
            nb.narrowband = true;
            finish(nb, list[i].seed);
            list.push_back(nb);
            break;
        }
    // Quiet calls: twins of full-level scenarios (same room, voices and sentences) with every signal 20 dB
    // quieter, so the two figures compare the level alone (RLS's start was tuned at the corpus's level).
    const std::vector<std::string> quietTwins = shortVersion ? std::vector<std::string>{"speech-rt300-enr30-dt"}
                                                             : std::vector<std::string>{"white-rt300-enr30", "speech-rt300-enr30",
                                                                                        "speech-rt200-enr30-dt"};
    const std::size_t before = list.size();
    for (const std::string& name : quietTwins)
        for (std::size_t i = 0; i < before; ++i)
            if (list[i].name == name) {
                list.push_back(quieterTwin(list[i], -20.0));
                break;
            }
    return list;
}

Scenario quieterTwin(const Scenario& scenario, double levelDb)
{
    Scenario quiet = scenario;
    quiet.levelDb = levelDb;
    finish(quiet, scenario.seed);
    const std::string db = std::to_string(static_cast<int>(std::lround(-levelDb)));
    quiet.name += "-quiet" + db;
    quiet.description += ", every signal " + db + " dB quieter (a quiet call)";
    return quiet;
}

Scenario demoScenario()
{
    Scenario s = make(Excitation::Speech, 0.15, 40, 7.0);
    s.micDistance = 0.5;
    s.farVoice = "en+m3";
    s.writeNear = false;
    s.name = "demo";
    s.description = "far-end speech (espeak-ng en+m3) in a small room, RT60 0.15 s, mic 0.5 m from the "
                    "loudspeaker, pink near-end noise at 40 dB ENR, no near-end talker";
    s.seed = 7;
    return s;
}

} // namespace quell::corpus
