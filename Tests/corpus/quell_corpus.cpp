// SPDX-License-Identifier: GPL-3.0-or-later
// quell-corpus: writes the echo-cancellation test corpus (issue 7) or the bundled demo (issue 2).
//
//   quell-corpus --out DIR [--short] [--only NAME[,NAME...]] [--pcm16] [--rir-ms MS] [--no-speech] [--list]
//   quell-corpus --demo --out DIR
//
// Per scenario, DIR/<name>/ holds ref.wav (far end, one channel per loudspeaker), near.wav (clean near
// end as it reaches the mic), echo.wav, noise.wav, mic.wav = near + echo + noise, rir.wav (the room
// responses as applied, one channel per loudspeaker-mic pair, bulk delay not included), rir-after.wav
// (after an echo-path change) and scenario.json; DIR/manifest.tsv and DIR/manifest.json list them all.
#include <sndfile.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
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
    std::vector<std::string> only;
};

void usage(std::ostream& os)
{
    os << "usage: quell-corpus --out DIR [--short] [--only NAME[,NAME...]] [--pcm16] [--rir-ms MS] [--no-speech] [--list]\n"
          "       quell-corpus --demo --out DIR\n"
          "  --short      the CI-sized corpus: a few scenarios of 5 s\n"
          "  --only       render only the named scenarios (see --list)\n"
          "  --pcm16      16-bit PCM files (components pre-quantised so that mic = near + echo + noise exactly);\n"
          "               default 32-bit float\n"
          "  --rir-ms MS  cut the echo paths at MS milliseconds (5 ms fade): an echo a filter that long models\n"
          "               entirely; default: the full physical decay\n"
          "  --no-speech  skip the scenarios that need espeak-ng\n"
          "  --list       print the scenario names and descriptions, write nothing\n"
          "  --demo       the bundled demo of Resources/demo (16-bit, mono, 16 kHz)\n";
}

Options parse(int argc, char** argv)
{
    Options o;
    quell::io::Arguments args(argc, argv);
    while (args.next()) {
        const std::string a = args.option();
        auto value = [&] { return args.value(); };
        if (a == "--out")
            o.out = value();
        else if (a == "--short")
            o.shortVersion = true;
        else if (a == "--demo")
            o.demo = true;
        else if (a == "--pcm16")
            o.pcm16 = true;
        else if (a == "--no-speech")
            o.noSpeech = true;
        else if (a == "--list")
            o.list = true;
        else if (a == "--rir-ms") {
            o.rirMaxMs = quell::io::parseDouble(a, value(), 1.0, 2000.0);
        }
        else if (a == "--only") {
            std::stringstream ss(value());
            for (std::string name; std::getline(ss, name, ',');)
                if (!name.empty())
                    o.only.push_back(name);
        } else if (a == "--help" || a == "-h") {
            usage(std::cout);
            std::exit(0);
        } else
            throw std::invalid_argument("unknown option " + a);
    }
    if (o.out.empty() && !o.list)
        throw std::invalid_argument("--out DIR is required");
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

std::string jsonString(const std::string& s)
{
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string jsonPoint(const Point3& p) { return "[" + num(p.x, 3) + ", " + num(p.y, 3) + ", " + num(p.z, 3) + "]"; }

std::string jsonPoints(const std::vector<Point3>& ps)
{
    std::string s = "[";
    for (std::size_t i = 0; i < ps.size(); ++i)
        s += (i ? ", " : "") + jsonPoint(ps[i]);
    return s + "]";
}

std::string jsonIntervals(const std::vector<Interval>& iv)
{
    std::string s = "[";
    for (std::size_t i = 0; i < iv.size(); ++i)
        s += (i ? ", " : "") + std::string("[") + num(iv[i].first, 3) + ", " + num(iv[i].second, 3) + "]";
    return s + "]";
}

std::string scenarioJson(const RenderedScenario& r, const std::string& indent)
{
    const Scenario& s = r.scenario;
    const std::string in = indent + "  ";
    std::ostringstream j;
    j << indent << "{\n"
      << in << "\"name\": " << jsonString(s.name) << ",\n"
      << in << "\"description\": " << jsonString(s.description) << ",\n"
      << in << "\"sampleRate\": " << s.sampleRate << ",\n"
      << in << "\"seconds\": " << num(s.seconds) << ",\n"
      << in << "\"excitation\": " << jsonString(toString(s.nearEndOnly ? Excitation::None : s.excitation)) << ",\n"
      << in << "\"rt60Target\": " << num(s.rt60) << ",\n"
      << in << "\"rt60MeasuredT20\": " << (r.rirT20 > 0 ? num(r.rirT20) : "null") << ",\n"
      << in << "\"rt60MeasuredT30\": " << (r.rirT30 > 0 ? num(r.rirT30) : "null") << ",\n"
      << in << "\"rirLengthMs\": " << num(static_cast<double>(r.rirBefore[0].size()) * 1e3 / s.sampleRate, 2) << ",\n"
      << in << "\"rirCutMs\": " << (s.rirMaxMs > 0 ? num(s.rirMaxMs) : "null") << ",\n"
      << in << "\"rirTailBeyond64msDb\": " << num(r.tailBeyond64msDb, 2) << ",\n"
      << in << "\"rirTailBeyond256msDb\": " << num(r.tailBeyond256msDb, 2) << ",\n"
      << in << "\"enrDbTarget\": " << (s.nearEndOnly ? "null" : num(s.enrDb)) << ",\n"
      << in << "\"enrDbMeasured\": " << (s.nearEndOnly ? "null" : num(r.measuredEnrDb, 3)) << ",\n"
      << in << "\"nearToNoiseDb\": " << (s.nearEndOnly ? num(s.nearToNoiseDb) : "null") << ",\n"
      << in << "\"nearToEchoDb\": " << (s.doubleTalk ? num(r.measuredNearToEchoDb, 3) : "null") << ",\n"
      << in << "\"bulkDelayMs\": " << num(s.bulkDelayMs) << ",\n"
      << in << "\"directPathMs\": " << num(r.directPathMs, 3) << ",\n"
      << in << "\"pathChangeSeconds\": " << (r.changeTime >= 0 ? num(r.changeTime) : "null") << ",\n"
      << in << "\"doubleTalk\": " << (s.doubleTalk ? "true" : "false") << ",\n"
      << in << "\"loudspeakerSoftClipDrive\": " << (r.softClipDrive > 0 ? num(r.softClipDrive) : "null") << ",\n"
      << in << "\"loudspeakerSdrDb\": " << num(r.measuredSdrDb, 2) << ",\n"
      << in << "\"deviceChain\": " << (s.deviceChain ? "true" : "false") << ",\n"
      << in << "\"narrowband\": " << (s.narrowband ? "true" : "false") << ",\n"
      << in << "\"lineNoiseDbfs\": " << num(s.lineNoiseDbfs, 1) << ",\n"
      << in << "\"lineNoiseSpeechShaped\": " << (s.lineNoiseSpeechShaped ? "true" : "false") << ",\n"
      << in << "\"echoCoupled\": " << (s.echoCoupled ? "true" : "false") << ",\n"
      << in << "\"lateFarEnd\": " << (s.lateFarEnd ? "true" : "false") << ",\n"
      << in << "\"loudspeakers\": " << s.loudspeakers << ",\n"
      << in << "\"mics\": " << s.mics << ",\n"
      << in << "\"farVoices\": "
      << (s.excitation != Excitation::Speech || s.nearEndOnly
              ? std::string("null")
              : "[" + jsonString(s.farVoice) + (s.loudspeakers == 2 ? ", " + jsonString(s.farVoice2) : "") + "]")
      << ",\n"
      << in << "\"nearVoice\": " << (s.doubleTalk || s.nearEndOnly || s.lateFarEnd ? jsonString(s.nearVoice) : "null") << ",\n"
      << in << "\"seed\": " << s.seed << ",\n"
      << in << "\"room\": {\"size\": " << jsonPoint(r.roomSize) << ", \"wallReflection\": " << num(r.reflection, 5)
      << ", \"loudspeakers\": " << jsonPoints(r.loudspeakers) << ", \"mics\": " << jsonPoints(r.mics)
      << ", \"loudspeakersAfterChange\": " << jsonPoints(r.loudspeakersAfter)
      << ", \"micsAfterChange\": " << jsonPoints(r.micsAfter) << ", \"nearTalker\": " << jsonPoint(r.nearTalker)
      << "},\n"
      << in << "\"farActive\": " << jsonIntervals(r.farActive) << ",\n"
      << in << "\"echoActive\": " << jsonIntervals(r.echoActive) << ",\n"
      << in << "\"nearActive\": " << jsonIntervals(r.nearActive) << ",\n"
      << in << "\"doubleTalkIntervals\": " << jsonIntervals(r.doubleTalk) << "\n"
      << indent << "}";
    return j.str();
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
    writeText(dir / "scenario.json", scenarioJson(r, "") + "\n");
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
    std::string json = "{\n  \"generator\": \"quell-corpus\",\n  \"format\": " + jsonString(o.pcm16 ? "PCM_16" : "FLOAT")
                       + ",\n  \"scenarios\": [\n";
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
        json += scenarioJson(r, "    ") + (i + 1 < list.size() ? ",\n" : "\n");
    }
    json += "  ]\n}\n";
    writeText(o.out / "manifest.tsv", tsv);
    writeText(o.out / "manifest.json", json);
    std::printf("wrote %zu scenarios to %s\n", list.size(), o.out.string().c_str());
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        const Options o = parse(argc, argv);
        return o.demo ? runDemo(o) : runCorpus(o);
    } catch (const std::invalid_argument& e) {
        std::cerr << "quell-corpus: " << e.what() << "\n";
        usage(std::cerr);
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "quell-corpus: " << e.what() << "\n";
        return 1;
    }
}
