// SPDX-License-Identifier: GPL-3.0-or-later
// quell-corpus: writes the echo-cancellation test corpus (issue 7) or the bundled demo (issue 2).
//
//   quell-corpus --out DIR [--short] [--only NAME[,NAME...]] [--quieter DB] [--pcm16] [--rir-ms MS] [--no-speech] [--list]
//   quell-corpus --demo --out DIR
//
// Per scenario, DIR/<name>/ holds ref.wav (far end, one channel per loudspeaker), near.wav (clean near
// end as it reaches the mic), echo.wav, noise.wav, mic.wav = near + echo + noise, rir.wav (the room
// responses as applied, one channel per loudspeaker-mic pair, bulk delay not included), rir-after.wav
// (after an echo-path change) and scenario.json; DIR/manifest.tsv and DIR/manifest.json list them all.
#include <nlohmann/json.hpp>
#include <sndfile.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "corpus/CorpusSignals.h"
#include "corpus/ImpulseResponseAnalysis.h"
#include "corpus/Scenario.h"
#include "corpus/SpeechSynthesis.h"
#include "io/CommandLine.h"
#include "io/WavFile.h"
#include "ProgramOptions.h"

namespace fs = std::filesystem;
using namespace quell;
using namespace quell::corpus;

namespace {

struct Options {
    fs::path out;
    bool shortVersion = false;
    bool demo = false;
    bool pcm16 = false;
    bool noSpeech = false;
    bool list = false;
    double rirMaxMs = 0.0;
    double quieterDb = 0.0;
    std::vector<std::string> only;
};

// Parses the command line; nullopt when --help or --version answered it.
std::optional<Options> parse(int argc, char** argv)
{
    Options o;
    std::string out;
    standalone::ProgramOptions cli("quell-corpus",
                                   "usage: quell-corpus --out DIR [--short] [--only NAME[,NAME...]] [--quieter DB] [--pcm16] [--rir-ms MS]\n"
                                   "                    [--no-speech] [--list]\n"
                                   "       quell-corpus --demo --out DIR",
                                   standalone::ProgramOptions::versionLine("quell-corpus"));
    cli.text("--out", "DIR", out, "the folder to write (one folder per scenario, and a manifest)");
    cli.flag("--short", o.shortVersion, "the CI-sized corpus: a few scenarios of 5 s");
    cli.option("--only", "NAME[,NAME...]", "render only the named scenarios (see --list)", [&o](const std::string& v) {
        std::stringstream ss(v);
        for (std::string name; std::getline(ss, name, ',');)
            if (!name.empty())
                o.only.push_back(name);
    });
    cli.number("--quieter", "DB", o.quieterDb, 1.0, 60.0, "every scenario with all its signals DB quieter (a quiet call; names end in\n"
                                                          "-quietDB): the level's own effect, against the full-level files");
    cli.flag("--pcm16", o.pcm16, "16-bit PCM files (components pre-quantised so that mic = near + echo + noise exactly);\n"
                                 "default 32-bit float");
    cli.number("--rir-ms", "MS", o.rirMaxMs, 1.0, 2000.0, "cut the echo paths at MS milliseconds (5 ms fade): an echo a filter that\n"
                                                          "long models entirely; default: the full physical decay");
    cli.flag("--no-speech", o.noSpeech, "skip the scenarios that need espeak-ng");
    cli.flag("--list", o.list, "print the scenario names and descriptions, write nothing");
    cli.flag("--demo", o.demo, "the bundled demo of Resources/demo (16-bit, mono, 16 kHz)");
    if (!cli.parse(argc, argv))
        return std::nullopt;
    o.out = out;
    if (o.out.empty() && !o.list)
        throw io::UsageError("--out DIR is required (see --help)");
    return o;
}

std::string num(double v, int precision = 4)
{
    if (!std::isfinite(v))
        return "null";
    std::ostringstream os;
    os.precision(precision);
    os << std::fixed << v;
    std::string s = os.str();
    // Trim trailing zeros for readability ("0.3000" -> "0.3").
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0')
            s.pop_back();
        if (s.back() == '.')
            s.pop_back();
    }
    return s;
}

// A figure rounded to `digits` decimals (not finite: written as null).
nlohmann::ordered_json rounded(double v, int digits = 4)
{
    const double scale = std::pow(10.0, digits);
    return std::round(v * scale) / scale;
}

nlohmann::ordered_json point(const Point3& p) { return {rounded(p.x, 3), rounded(p.y, 3), rounded(p.z, 3)}; }

nlohmann::ordered_json points(const std::vector<Point3>& ps)
{
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const Point3& p : ps)
        a.push_back(point(p));
    return a;
}

nlohmann::ordered_json intervals(const std::vector<Interval>& iv)
{
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const Interval& i : iv)
        a.push_back({rounded(i.first, 3), rounded(i.second, 3)});
    return a;
}

// Every parameter and measured figure of a rendered scenario (scenario.json; Tests/eval reads it).
nlohmann::ordered_json scenarioJson(const RenderedScenario& r)
{
    const Scenario& s = r.scenario;
    const auto orNull = [](bool present, nlohmann::ordered_json v) { return present ? v : nlohmann::ordered_json(nullptr); };
    nlohmann::ordered_json farVoices = nullptr;
    if (s.excitation == Excitation::Speech && !s.nearEndOnly) {
        farVoices = nlohmann::ordered_json::array({s.farVoice});
        if (s.loudspeakers == 2 && !s.monoInBothChannels)
            farVoices.push_back(s.farVoice2);
    }
    return {
        {"name", s.name},
        {"description", s.description},
        {"sampleRate", s.sampleRate},
        {"seconds", rounded(s.seconds)},
        {"excitation", toString(s.nearEndOnly ? Excitation::None : s.excitation)},
        {"rt60Target", rounded(s.rt60)},
        {"rt60MeasuredT20", orNull(r.rirT20 > 0, rounded(r.rirT20))},
        {"rt60MeasuredT30", orNull(r.rirT30 > 0, rounded(r.rirT30))},
        {"rirLengthMs", rounded(static_cast<double>(r.rirBefore[0].size()) * 1e3 / s.sampleRate, 2)},
        {"rirCutMs", orNull(s.rirMaxMs > 0, rounded(s.rirMaxMs))},
        {"rirTailBeyond64msDb", rounded(r.tailBeyond64msDb, 2)},
        {"rirTailBeyond256msDb", rounded(r.tailBeyond256msDb, 2)},
        {"enrDbTarget", orNull(!s.nearEndOnly, rounded(s.enrDb))},
        {"enrDbMeasured", orNull(!s.nearEndOnly, rounded(r.measuredEnrDb, 3))},
        {"nearToNoiseDb", orNull(s.nearEndOnly, rounded(s.nearToNoiseDb))},
        {"nearToEchoDb", orNull(s.doubleTalk, rounded(r.measuredNearToEchoDb, 3))},
        {"bulkDelayMs", rounded(s.bulkDelayMs)},
        {"directPathMs", rounded(r.directPathMs, 3)},
        {"pathChangeSeconds", orNull(r.changeTime >= 0, rounded(r.changeTime))},
        {"doubleTalk", s.doubleTalk},
        {"loudspeakerSoftClipDrive", orNull(r.softClipDrive > 0, rounded(r.softClipDrive))},
        {"loudspeakerSdrDb", rounded(r.measuredSdrDb, 2)},
        {"deviceChain", s.deviceChain},
        {"narrowband", s.narrowband},
        {"levelDb", rounded(s.levelDb, 1)},
        {"lineNoiseDbfs", rounded(s.lineNoiseDbfs, 1)},
        {"lineNoiseSpeechShaped", s.lineNoiseSpeechShaped},
        {"echoCoupled", s.echoCoupled},
        {"lateFarEnd", s.lateFarEnd},
        {"loudspeakers", s.loudspeakers},
        {"monoInBothChannels", s.monoInBothChannels},
        {"mics", s.mics},
        {"farVoices", farVoices},
        {"nearVoice", orNull(s.doubleTalk || s.nearEndOnly || s.lateFarEnd, s.nearVoice)},
        {"seed", s.seed},
        {"room", {{"size", point(r.roomSize)}, {"wallReflection", rounded(r.reflection, 5)},
                  {"loudspeakers", points(r.loudspeakers)}, {"mics", points(r.mics)},
                  {"loudspeakersAfterChange", points(r.loudspeakersAfter)}, {"micsAfterChange", points(r.micsAfter)},
                  {"nearTalker", point(r.nearTalker)}}},
        {"farActive", intervals(r.farActive)},
        {"echoActive", intervals(r.echoActive)},
        {"nearActive", intervals(r.nearActive)},
        {"doubleTalkIntervals", intervals(r.doubleTalk)},
    };
}

std::string jsonText(const nlohmann::ordered_json& j)
{
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void writeText(const fs::path& path, const std::string& text)
{
    const fs::path tmp = path.string() + ".part";
    {
        std::ofstream f(tmp);
        f << text;
        if (!f)
            throw std::runtime_error(path.string() + ": cannot write");
    }
    fs::rename(tmp, path);
}

void writeWav(const fs::path& path, const std::vector<std::vector<double>>& channels, int rate, bool pcm16)
{
    io::AudioFormat format;
    format.sampleRate = rate;
    format.channels = static_cast<int>(channels.size());
    format.sndfileFormat = SF_FORMAT_WAV | (pcm16 ? SF_FORMAT_PCM_16 : SF_FORMAT_FLOAT);
    format.subtypeName = pcm16 ? "PCM_16" : "FLOAT";
    std::vector<std::vector<float>> f;
    for (const auto& c : channels)
        f.emplace_back(c.begin(), c.end());
    io::writeAudioAtomically(path.string(), format, f);
}

// 16-bit output: every component on the PCM grid before the mixture is formed, so the files that come
// back from disk still add up exactly (mic = near + echo + noise).
void quantizeComponents(RenderedScenario& r)
{
    for (auto* group : {&r.ref, &r.near, &r.echo, &r.noise})
        for (auto& c : *group)
            quantizeToPcm16(c);
    for (std::size_t m = 0; m < r.mic.size(); ++m)
        for (std::size_t i = 0; i < r.mic[m].size(); ++i)
            r.mic[m][i] = r.near[m][i] + r.echo[m][i] + r.noise[m][i];
}

void writeScenario(const fs::path& dir, RenderedScenario& r, bool pcm16)
{
    fs::create_directories(dir);
    const int rate = r.scenario.sampleRate;
    if (pcm16)
        quantizeComponents(r);
    writeWav(dir / "ref.wav", r.ref, rate, pcm16);
    if (r.scenario.writeNear)
        writeWav(dir / "near.wav", r.near, rate, pcm16);
    writeWav(dir / "echo.wav", r.echo, rate, pcm16);
    writeWav(dir / "noise.wav", r.noise, rate, pcm16);
    writeWav(dir / "mic.wav", r.mic, rate, pcm16);
    // Room responses keep float precision: their tails are far below the 16-bit step.
    writeWav(dir / "rir.wav", r.rirBefore, rate, false);
    if (r.changeTime >= 0.0)
        writeWav(dir / "rir-after.wav", r.rirAfter, rate, false);
    writeText(dir / "scenario.json", jsonText(scenarioJson(r)));
}

std::string dbCell(double db) { return std::isfinite(db) ? num(db, 1) : "-inf"; }

std::string tsvHeader()
{
    return "name\texcitation\tseconds\trt60_target\trt60_t30\trir_cut_ms\ttail64ms_db\ttail256ms_db\tenr_db\tbulk_delay_ms\tdirect_path_ms\t"
           "path_change_s\tdouble_talk\tloudspeaker_sdr_db\tloudspeakers\tmics\tfar_voice\tnear_voice\n";
}

std::string tsvRow(const RenderedScenario& r)
{
    const Scenario& s = r.scenario;
    std::ostringstream os;
    os << s.name << '\t' << toString(s.nearEndOnly ? Excitation::None : s.excitation) << '\t' << num(s.seconds) << '\t'
       << num(s.rt60) << '\t' << (r.rirT30 > 0 ? num(r.rirT30, 3) : "-") << '\t' << (s.rirMaxMs > 0 ? num(s.rirMaxMs) : "-") << '\t'
       << dbCell(r.tailBeyond64msDb) << '\t' << dbCell(r.tailBeyond256msDb) << '\t'
       << (s.nearEndOnly ? "-" : num(r.measuredEnrDb, 2)) << '\t' << num(s.bulkDelayMs) << '\t'
       << num(r.directPathMs, 2) << '\t' << (r.changeTime >= 0 ? num(r.changeTime) : "-") << '\t'
       << (s.doubleTalk ? "yes" : "no") << '\t' << (std::isfinite(r.measuredSdrDb) ? num(r.measuredSdrDb, 1) : "linear")
       << '\t' << s.loudspeakers << '\t' << s.mics << '\t'
       << (s.excitation == Excitation::Speech && !s.nearEndOnly ? s.farVoice : "-") << '\t'
       << (s.doubleTalk || s.nearEndOnly || s.lateFarEnd ? s.nearVoice : "-") << '\n';
    return os.str();
}

int runDemo(const Options& o)
{
    requireEspeak();
    RenderedScenario r = render(demoScenario());
    writeScenario(o.out, r, true);
    const auto& s = r.scenario;
    const double fs = s.sampleRate;
    const auto tail = [&](double ms) { return tailEnergyDb(r.rirBefore[0], static_cast<std::size_t>(ms * 1e-3 * fs)); };
    // Figures on what was written (16-bit components).
    const double echoDb = powerDb(activePower(r.echo[0], fs));
    const double noiseDb = powerDb(activePower(r.noise[0], fs));
    std::printf("demo: %s\n", s.description.c_str());
    std::printf("  duration            %.2f s at %d Hz, mono, 16-bit\n", s.seconds, s.sampleRate);
    std::printf("  room                %.2f x %.2f x %.2f m, wall reflection %.4f\n", r.roomSize.x, r.roomSize.y,
                r.roomSize.z, r.reflection);
    std::printf("  RT60                target %.3f s, measured T20 %.3f s, T30 %.3f s\n", s.rt60, r.rirT20, r.rirT30);
    std::printf("  direct path         %.2f ms\n", r.directPathMs);
    std::printf("  echo level          %.2f dBFS active (%.2f dBFS over the whole file)\n", echoDb,
                powerDb(meanPower(r.echo[0])));
    std::printf("  noise level         %.2f dBFS\n", noiseDb);
    std::printf("  ENR                 %.2f dB (target %.1f)\n", echoDb - noiseDb, s.enrDb);
    std::printf("  RIR energy beyond   32 ms: %.2f dB, 64 ms: %.2f dB, 128 ms: %.2f dB (of the total)\n", tail(32), tail(64),
                tail(128));
    return 0;
}

int runCorpus(const Options& o)
{
    std::vector<Scenario> list = corpusScenarios(o.shortVersion);
    if (!o.only.empty()) {
        std::vector<Scenario> chosen;
        for (const auto& name : o.only) {
            bool found = false;
            for (const auto& s : list)
                if (s.name == name) {
                    chosen.push_back(s);
                    found = true;
                }
            if (!found)
                throw std::invalid_argument("no scenario named " + name + " (see --list" +
                                            (o.shortVersion ? " --short" : "") + ")");
        }
        list = chosen;
    }
    if (o.quieterDb > 0.0) {
        std::vector<Scenario> quiet;
        for (const auto& s : list)
            if (s.levelDb == 0.0)
                quiet.push_back(quieterTwin(s, -o.quieterDb));
        list = quiet;
    }
    if (o.noSpeech) {
        std::vector<Scenario> kept;
        for (const auto& s : list)
            if (s.excitation != Excitation::Speech && !s.nearEndOnly && !s.doubleTalk)
                kept.push_back(s);
        list = kept;
    }
    if (o.list) {
        for (const auto& s : list)
            std::printf("%-40s %s\n", s.name.c_str(), s.description.c_str());
        return 0;
    }
    bool needsSpeech = false;
    for (const auto& s : list)
        needsSpeech = needsSpeech || s.excitation == Excitation::Speech || s.nearEndOnly || s.doubleTalk;
    if (needsSpeech)
        requireEspeak();

    fs::create_directories(o.out);
    std::string tsv = tsvHeader();
    nlohmann::ordered_json manifest = {{"generator", "quell-corpus"}, {"format", o.pcm16 ? "PCM_16" : "FLOAT"},
                                       {"scenarios", nlohmann::ordered_json::array()}};
    for (std::size_t i = 0; i < list.size(); ++i) {
        std::printf("[%zu/%zu] %s ... ", i + 1, list.size(), list[i].name.c_str());
        std::fflush(stdout);
        list[i].rirMaxMs = o.rirMaxMs;
        RenderedScenario r = render(list[i]);
        writeScenario(o.out / list[i].name, r, o.pcm16);
        std::printf("RT60 T30 %.3f s, %s, echo energy beyond 64 ms %.1f dB, beyond 256 ms %.1f dB\n", r.rirT30,
                    list[i].nearEndOnly ? "no far end" : ("ENR " + num(r.measuredEnrDb, 1) + " dB").c_str(),
                    r.tailBeyond64msDb, r.tailBeyond256msDb);
        tsv += tsvRow(r);
        manifest["scenarios"].push_back(scenarioJson(r));
    }
    writeText(o.out / "manifest.tsv", tsv);
    writeText(o.out / "manifest.json", jsonText(manifest));
    std::printf("wrote %zu scenarios to %s\n", list.size(), o.out.string().c_str());
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        const std::optional<Options> o = parse(argc, argv);
        if (!o)
            return 0;
        return o->demo ? runDemo(*o) : runCorpus(*o);
    } catch (...) {
        return io::reportCurrentException("quell-corpus");
    }
}
