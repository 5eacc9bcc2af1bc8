// SPDX-License-Identifier: GPL-3.0-or-later
#include "corpus/Scenario.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <random>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "corpus/FftConvolution.h"
#include "corpus/ImpulseResponseAnalysis.h"
#include "corpus/SpeechSynthesis.h"

namespace quell::corpus {
namespace {

constexpr double kSoundSpeed = 343.0;
constexpr double kRefLevelDbfs = -26.0;
constexpr double kEchoLevelDbfs = -32.0;

double dbToPower(double db) { return std::pow(10.0, db / 10.0); }

// Sentences for the talkers: varied phonetics and lengths, written for this corpus.
const std::vector<std::string>& sentences()
{
    static const std::vector<std::string> s = {
        "Please keep the front door closed while the heating is on.",
        "The train to the coast leaves from platform nine at a quarter past four.",
        "She measured the garden twice before she bought the fence.",
        "Can you hear me clearly, or is the line still breaking up?",
        "Seven yellow boats drifted slowly across the quiet harbour.",
        "We should move the meeting to Thursday afternoon.",
        "A cup of strong coffee helps on a cold and windy morning.",
        "The engineer checked every cable twice and found nothing wrong.",
        "My brother lives in a small village beyond the northern hills.",
        "Turn left at the bakery, then walk straight on for two minutes.",
        "Nobody expected the old clock to start ticking again.",
        "I think the report needs one more page of figures.",
        "Fresh bread, sharp cheese and green apples were on the table.",
        "How long does it take to drive from here to the airport?",
        "The children laughed when the puppy chased its own tail.",
        "Thank you for waiting, the next available agent will be with you shortly.",
        "Heavy rain is expected over the weekend, with some thunder on Sunday.",
        "Could you send me the latest version of the slides before lunch?",
    };
    return s;
}

// Synthesised utterances are cached: the corpus reuses sentences across scenarios.
const std::vector<double>& spoken(const std::string& text, const std::string& voice, int rate, int sampleRate)
{
    static std::map<std::tuple<std::string, std::string, int, int>, std::vector<double>> cache;
    const auto key = std::make_tuple(text, voice, rate, sampleRate);
    auto it = cache.find(key);
    if (it == cache.end()) {
        Utterance u;
        u.text = text;
        u.voice = voice;
        u.wordsPerMinute = rate;
        it = cache.emplace(key, synthesize(u, sampleRate)).first;
    }
    return it->second;
}

// Sentences of the given voices (alternating) placed one after another with pauses from `start` to
// the end of `length`; the last one may be cut, with a 10 ms fade. Returns one track per voice, so a
// stereo far end can put each talker at its own place in the far-end room.
std::vector<std::vector<double>> speechTracks(const std::vector<std::string>& voices, std::size_t start,
                                              std::size_t length, int sampleRate, std::mt19937& rng)
{
    std::vector<std::vector<double>> tracks(voices.size(), std::vector<double>(length, 0.0));
    std::uniform_int_distribution<std::size_t> pick(0, sentences().size() - 1);
    std::uniform_real_distribution<double> pause(0.25, 0.8);
    std::uniform_int_distribution<int> wpm(150, 175);
    std::size_t pos = start;
    std::size_t talker = 0;
    while (pos < length) {
        const std::vector<double>& s = spoken(sentences()[pick(rng)], voices[talker], wpm(rng), sampleRate);
        const std::size_t n = std::min(s.size(), length - pos);
        const auto fade = static_cast<std::size_t>(0.01 * sampleRate);
        for (std::size_t i = 0; i < n; ++i) {
            double g = 1.0;
            if (n < s.size() && n - i <= fade)
                g = static_cast<double>(n - i) / static_cast<double>(fade);
            tracks[talker][pos + i] = g * s[i];
        }
        pos += n + static_cast<std::size_t>(pause(rng) * sampleRate);
        talker = (talker + 1) % voices.size();
    }
    return tracks;
}

void setActiveLevel(std::vector<std::vector<double>>& channels, double dbfs, double sampleRate)
{
    const double p = activePower(channels.at(0), sampleRate);
    if (!(p > 0.0))
        return;
    const double g = std::sqrt(dbToPower(dbfs) / p);
    for (auto& c : channels)
        scale(c, g);
}

bool insideWithMargin(const Point3& p, const Point3& size, double margin)
{
    return p.x > margin && p.y > margin && p.z > margin && p.x < size.x - margin && p.y < size.y - margin
           && p.z < size.z - margin;
}

Point3 offsetHorizontal(const Point3& p, double dist, double angle, double dz = 0.0)
{
    return {p.x + dist * std::cos(angle), p.y + dist * std::sin(angle), p.z + dz};
}

// Places the device (loudspeakers and mics) and the near-end talker in the room.
struct Layout {
    std::vector<Point3> loudspeakers, mics;
    Point3 talker;
};

Layout placeDevice(const Scenario& sc, const Point3& size, std::mt19937& rng)
{
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int attempt = 0; attempt < 1000; ++attempt) {
        Layout l;
        const Point3 centre{0.8 + unit(rng) * (size.x - 1.6), 0.8 + unit(rng) * (size.y - 1.6), 0.9 + 0.4 * unit(rng)};
        const double facing = 2.0 * std::numbers::pi * unit(rng);
        const double across = facing + 0.5 * std::numbers::pi;
        if (sc.loudspeakers == 1) {
            l.loudspeakers.push_back(centre);
        } else {
            l.loudspeakers.push_back(offsetHorizontal(centre, 0.4, across));
            l.loudspeakers.push_back(offsetHorizontal(centre, -0.4, across));
        }
        const Point3 micCentre = offsetHorizontal(centre, sc.micDistance, facing, 0.1 * (unit(rng) - 0.5));
        if (sc.mics == 1) {
            l.mics.push_back(micCentre);
        } else {
            l.mics.push_back(offsetHorizontal(micCentre, 0.075, across));
            l.mics.push_back(offsetHorizontal(micCentre, -0.075, across));
        }
        l.talker = offsetHorizontal(micCentre, 0.6 + 0.4 * unit(rng), facing + (unit(rng) - 0.5), 0.3);
        bool ok = insideWithMargin(l.talker, size, 0.4);
        for (const auto& p : l.loudspeakers)
            ok = ok && insideWithMargin(p, size, 0.4);
        for (const auto& p : l.mics)
            ok = ok && insideWithMargin(p, size, 0.4);
        if (ok)
            return l;
    }
    throw std::runtime_error("scenario " + sc.name + ": cannot place the device in the room");
}

// The echo path change: someone moves the device a little (mics 25 cm, loudspeakers 10 cm).
Layout moveDevice(const Scenario& sc, const Layout& before, const Point3& size, std::mt19937& rng)
{
    std::uniform_real_distribution<double> angle(0.0, 2.0 * std::numbers::pi);
    for (int attempt = 0; attempt < 1000; ++attempt) {
        Layout l = before;
        const double a = angle(rng), b = angle(rng);
        bool ok = true;
        for (auto& p : l.mics) {
            p = offsetHorizontal(p, 0.25, a);
            ok = ok && insideWithMargin(p, size, 0.3);
        }
        for (auto& p : l.loudspeakers) {
            p = offsetHorizontal(p, 0.10, b);
            ok = ok && insideWithMargin(p, size, 0.3);
        }
        if (ok)
            return l;
    }
    throw std::runtime_error("scenario " + sc.name + ": cannot move the device for the path change");
}

} // namespace

const char* toString(Excitation e)
{
    switch (e) {
    case Excitation::Speech: return "speech";
    case Excitation::WhiteNoise: return "white";
    case Excitation::PinkNoise: return "pink";
    case Excitation::Music: return "music";
    case Excitation::None: return "none";
    }
    return "?";
}

RenderedScenario render(const Scenario& sc)
{
    if (sc.seconds <= 0.0 || sc.sampleRate <= 0 || sc.loudspeakers < 1 || sc.loudspeakers > 2 || sc.mics < 1
        || sc.mics > 2)
        throw std::invalid_argument("scenario " + sc.name + ": bad duration, rate or channel counts");
    RenderedScenario r;
    r.scenario = sc;
    const double fs = sc.sampleRate;
    const auto n = static_cast<std::size_t>(std::llround(sc.seconds * fs));
    std::mt19937 rng(sc.seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const bool farEnd = !sc.nearEndOnly && sc.excitation != Excitation::None;

    // The room and the device in it.
    r.roomSize = {3.5 + 3.5 * unit(rng), 3.0 + 2.5 * unit(rng), 2.5 + 0.7 * unit(rng)};
    r.reflection = imageMethodReflection(r.roomSize, sc.rt60, kSoundSpeed);
    const ShoeboxRoom room = uniformRoom(r.roomSize, r.reflection);
    const Layout before = placeDevice(sc, r.roomSize, rng);
    const Layout after = sc.pathChange ? moveDevice(sc, before, r.roomSize, rng) : before;
    r.loudspeakers = before.loudspeakers;
    r.mics = before.mics;
    r.loudspeakersAfter = after.loudspeakers;
    r.micsAfter = after.mics;
    r.nearTalker = before.talker;
    const std::size_t changeSample = sc.pathChange ? n / 2 : n;
    r.changeTime = sc.pathChange ? static_cast<double>(changeSample) / fs : -1.0;

    RirOptions rirOptions;
    rirOptions.sampleRate = fs;
    rirOptions.soundSpeed = kSoundSpeed;
    // Long enough to reach about -60 dB: the full tail, not just what a 1024-tap filter covers.
    rirOptions.lengthSeconds = std::max(0.1, 1.1 * sc.rt60);

    const auto L = static_cast<std::size_t>(sc.loudspeakers), M = static_cast<std::size_t>(sc.mics);

    // Far-end signals.
    r.ref.assign(L, std::vector<double>(n, 0.0));
    const std::size_t farStart = static_cast<std::size_t>((sc.lateFarEnd ? 0.5 * sc.seconds : 0.2) * fs);
    if (farEnd) {
        if (sc.excitation == Excitation::Speech) {
            if (L == 1 || sc.monoInBothChannels) {
                r.ref[0] = speechTracks({sc.farVoice}, farStart, n, sc.sampleRate, rng)[0];
                if (L == 2)
                    r.ref[1] = r.ref[0];
            } else {
                // Stereo far end: two talkers in a far-end room picked up by a spaced pair 0.5 m apart, so
                // the channels are strongly correlated but not identical, as in a real stereo call.
                const auto tracks = speechTracks({sc.farVoice, sc.farVoice2}, farStart, n, sc.sampleRate, rng);
                const Point3 farSize{5.0, 4.0, 2.8};
                const ShoeboxRoom farRoom = uniformRoom(farSize, imageMethodReflection(farSize, 0.3, kSoundSpeed));
                const Point3 pairMics[2] = {{2.25, 1.5, 1.4}, {2.75, 1.5, 1.4}};
                const Point3 talkers[2] = {{1.6, 2.8, 1.5}, {3.5, 2.6, 1.3}};
                RirOptions farOptions = rirOptions;
                farOptions.lengthSeconds = 0.35;
                for (std::size_t c = 0; c < 2; ++c)
                    for (std::size_t t = 0; t < 2; ++t) {
                        const auto h = shoeboxImpulseResponse(farRoom, talkers[t], pairMics[c], farOptions);
                        const auto y = convolveCausal(tracks[t], h);
                        for (std::size_t i = 0; i < n; ++i)
                            r.ref[c][i] += y[i];
                    }
            }
        } else {
            // Noise excitation: one source; in stereo, the second channel is the same noise through a
            // different short path (correlated channels, the hard case for stereo echo cancellation).
            const std::uint32_t s = sc.seed * 7919u + 17u;
            const auto x = sc.excitation == Excitation::WhiteNoise ? whiteNoise(n, s)
                           : sc.excitation == Excitation::Music    ? musicWithoutHighs(n, fs, s)
                                                                   : pinkNoise(n, s, fs);
            r.ref[0] = x;
            if (sc.lateFarEnd)
                std::fill(r.ref[0].begin(), r.ref[0].begin() + static_cast<std::ptrdiff_t>(farStart), 0.0);
            if (L == 2 && sc.monoInBothChannels) {
                r.ref[1] = r.ref[0];
            } else if (L == 2) {
                const std::vector<double> h2 = {0.0, 0.0, 0.0, 0.7, 0.2, -0.1, 0.05};
                r.ref[1] = convolveCausal(x, h2);
            }
        }
        if (sc.narrowband)
            for (auto& c : r.ref)
                c = bandLimited(c, fs, 300.0, 3400.0);
        setActiveLevel(r.ref, kRefLevelDbfs, fs);
    }
    // Line noise on the far end, at an absolute level, for the whole file.
    if (std::isfinite(sc.lineNoiseDbfs)) {
        const std::uint32_t seed = sc.seed * 6007u + 3u;
        std::vector<double> line;
        if (sc.lineNoiseSpeechShaped) {
            // The long-term spectrum of the far-end voice (a few sentences of it).
            std::mt19937 voiceRng(seed);
            const auto voice = speechTracks({sc.farVoice}, 0, static_cast<std::size_t>(6.0 * fs), sc.sampleRate, voiceRng)[0];
            line = speechShapedNoise(voice, n, seed);
        } else {
            line = whiteNoise(n, seed);
        }
        if (sc.narrowband)
            line = bandLimited(line, fs, 300.0, 3400.0);
        scale(line, std::pow(10.0, sc.lineNoiseDbfs / 20.0) / rms(line));
        for (auto& c : r.ref)
            for (std::size_t i = 0; i < n; ++i)
                c[i] += line[i];
    }
    const bool playsSomething = farEnd || std::isfinite(sc.lineNoiseDbfs);

    // Loudspeakers: optional soft clip.
    std::vector<std::vector<double>> speaker = r.ref;
    r.measuredSdrDb = std::numeric_limits<double>::infinity();
    if (farEnd && sc.distortionDb > 0.0) {
        r.softClipDrive = driveForDistortion(r.ref[0], sc.distortionDb);
        for (std::size_t l = 0; l < L; ++l)
            speaker[l] = softClip(r.ref[l], r.softClipDrive);
        r.measuredSdrDb = signalToDistortionDb(r.ref[0], speaker[0]);
    }
    if (farEnd && sc.deviceChain) {
        for (std::size_t l = 0; l < L; ++l)
            speaker[l] = deviceChain(r.ref[l], fs, sc.seed * 31u + static_cast<std::uint32_t>(l));
        r.measuredSdrDb = signalToDistortionDb(r.ref[0], speaker[0]);
    }
    const auto delay = static_cast<std::size_t>(std::llround(sc.bulkDelayMs * 1e-3 * fs));
    for (auto& s : speaker)
        s = delayed(s, delay);

    // Echo at each mic; room responses before and after the change.
    r.rirBefore.resize(L * M);
    r.rirAfter.resize(L * M);
    for (std::size_t l = 0; l < L; ++l)
        for (std::size_t m = 0; m < M; ++m) {
            r.rirBefore[l * M + m] = shoeboxImpulseResponse(room, before.loudspeakers[l], before.mics[m], rirOptions);
            r.rirAfter[l * M + m] = sc.pathChange
                                        ? shoeboxImpulseResponse(room, after.loudspeakers[l], after.mics[m], rirOptions)
                                        : r.rirBefore[l * M + m];
        }
    // Reverberation time from the full response, before any cut.
    try {
        r.rirT20 = t20(r.rirBefore[0], fs);
        r.rirT30 = t30(r.rirBefore[0], fs);
    } catch (const std::runtime_error&) {
        // Left at 0: reported as not measurable.
    }
    if (sc.rirMaxMs > 0.0) {
        const auto keep = static_cast<std::size_t>(std::llround(sc.rirMaxMs * 1e-3 * fs));
        const auto fade = static_cast<std::size_t>(std::llround(0.005 * fs));
        for (auto* set : {&r.rirBefore, &r.rirAfter})
            for (auto& h : *set)
                h = truncateWithFade(h, keep, fade);
    }
    r.echo.assign(M, std::vector<double>(n, 0.0));
    if (playsSomething && sc.echoCoupled) {
        for (std::size_t m = 0; m < M; ++m)
            for (std::size_t l = 0; l < L; ++l) {
                const auto y = switchedConvolution(speaker[l], r.rirBefore[l * M + m], r.rirAfter[l * M + m], changeSample);
                for (std::size_t i = 0; i < n; ++i)
                    r.echo[m][i] += y[i];
            }
        // One gain for every path, so the stored responses are exactly those applied. A far end of line
        // noise alone couples as a talker would: the echo path's gain is that of the speech's level.
        const double g = farEnd ? std::sqrt(dbToPower(kEchoLevelDbfs) / activePower(r.echo[0], fs))
                                : std::pow(10.0, (kEchoLevelDbfs - kRefLevelDbfs) / 20.0)
                                      * std::sqrt(meanPower(r.ref[0]) / std::max(meanPower(r.echo[0]), 1e-300));
        for (auto& e : r.echo)
            scale(e, g);
        for (auto& h : r.rirBefore)
            scale(h, g);
        for (auto& h : r.rirAfter)
            scale(h, g);
    }

    // Near-end talker: the whole file when alone, the first half before a late far end, else the second
    // half (after the change, if any).
    r.near.assign(M, std::vector<double>(n, 0.0));
    if (sc.doubleTalk || sc.nearEndOnly || sc.lateFarEnd) {
        const std::size_t start = sc.nearEndOnly || sc.lateFarEnd ? static_cast<std::size_t>(0.3 * fs)
                                                                  : n / 2 + static_cast<std::size_t>(0.4 * fs);
        const std::size_t end = sc.lateFarEnd ? farStart - static_cast<std::size_t>(0.3 * fs) : n;
        auto dry = speechTracks({sc.nearVoice}, start, end, sc.sampleRate, rng)[0];
        dry.resize(n, 0.0);
        for (std::size_t m = 0; m < M; ++m) {
            const auto h = shoeboxImpulseResponse(room, before.talker, before.mics[m], rirOptions);
            r.near[m] = convolveCausal(dry, h);
        }
        const double target = sc.doubleTalk ? kEchoLevelDbfs + sc.nearToEchoDb : kEchoLevelDbfs;
        setActiveLevel(r.near, target, fs);
    }

    // Noise: independent pink noise per mic at the echo-to-noise ratio (or near-to-noise when alone).
    r.noise.resize(M);
    for (std::size_t m = 0; m < M; ++m)
        r.noise[m] = pinkNoise(n, sc.seed * 104729u + 31u * static_cast<std::uint32_t>(m) + 5u, fs);
    const std::vector<double>& levelRef = farEnd ? r.echo[0] : r.near[0];
    const double ratio = farEnd ? sc.enrDb : sc.nearToNoiseDb;
    const double noiseGain = gainForRatioDb(r.noise[0], levelRef, ratio, fs);
    for (auto& c : r.noise)
        scale(c, noiseGain);

    r.mic.assign(M, std::vector<double>(n, 0.0));
    for (std::size_t m = 0; m < M; ++m)
        for (std::size_t i = 0; i < n; ++i)
            r.mic[m][i] = r.near[m][i] + r.echo[m][i] + r.noise[m][i];
    if (sc.levelDb != 0.0) {
        const double g = std::pow(10.0, sc.levelDb / 20.0);
        for (auto* signals : {&r.ref, &r.near, &r.echo, &r.noise, &r.mic})
            for (auto& c : *signals)
                scale(c, g);
    }

    // Figures for the manifest.
    const double noiseP = activePower(r.noise[0], fs);
    r.measuredEnrDb = farEnd ? powerDb(activePower(r.echo[0], fs)) - powerDb(noiseP) : 0.0;
    r.measuredNearToEchoDb = (farEnd && sc.doubleTalk)
                                 ? powerDb(activePower(r.near[0], fs)) - powerDb(activePower(r.echo[0], fs))
                                 : 0.0;
    const std::vector<double>& h0 = r.rirBefore[0];
    r.tailBeyond64msDb = tailEnergyDb(h0, static_cast<std::size_t>(0.064 * fs));
    r.tailBeyond256msDb = tailEnergyDb(h0, static_cast<std::size_t>(0.256 * fs));
    r.directPathMs = distance(before.loudspeakers[0], before.mics[0]) / kSoundSpeed * 1e3 + sc.bulkDelayMs;
    r.farActive = farEnd ? activityIntervals(r.ref[0], fs) : std::vector<Interval>{};
    r.echoActive = farEnd ? activityIntervals(r.echo[0], fs) : std::vector<Interval>{};
    r.nearActive = activityIntervals(r.near[0], fs);
    r.doubleTalk = intersect(r.echoActive, r.nearActive);
    return r;
}

} // namespace quell::corpus
