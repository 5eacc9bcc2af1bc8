// SPDX-License-Identifier: GPL-3.0-or-later
// quell-render: the offline echo canceller.
//   quell-render --mic MIC.wav --ref REF.wav --out OUT.wav [--taps N] [--lambda L] [--rate HZ]
//                [--backend cpu|gpu|auto] [--filter rls|kalman|nlms|auto] [--suppression DB] [--no-comfort-noise] [--distortion-model] [--metrics M.json] [--quiet]
//   quell-render --batch LIST.tsv [--shard K/N] [--jobs J | --calls S] [canceller options]
// Writes the echo-cancelled microphone in the microphone file's rate and sample format, then prints a
// summary: duration, real-time factor and steady-state ERLE. Exit codes: 0 done, 2 bad usage or bad
// input (nothing written), 1 failure while processing (nothing written). --batch renders every line of a
// list (Standalone/BatchList.h), skips what an earlier run finished, and ends with a line per file that
// failed; its exit code is 0 when every file is done, 1 when any failed, 2 when the list is bad.
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "BatchList.h"
#include "CancellerOptions.h"
#include "aec/Backend.h"
#include "aec/FilterKind.h"
#include "aec/FilterPlan.h"
#include "aec/ErleMeter.h"
#include "engine/OfflineCallBatch.h"
#include "engine/RealtimeEngine.h"
#include "io/AudioFileReader.h"
#include "io/AudioFileWriter.h"
#include "io/CommandLine.h"
#include "io/ProgressBar.h"
#include "io/WavFile.h"

using namespace quell;

namespace {

constexpr int kMaxMicChannels = 2;
constexpr int kMaxRefChannels = 2;
constexpr std::size_t kBlock = 4096;

struct Options {
    std::string mic, ref, out, metrics;
    std::string batch, shard;   // --batch LIST.tsv; --shard K/N
    int jobs = 1;               // files rendered at once in a batch
    int calls = 0;              // > 0: a batch's files as the calls of one many-calls engine, this many streams
    aec::EchoCancellerSettings aec{};
    int cancellerRate = aec::kCancellerRate;
    bool rateFromInput = false;
    bool monoFarEnd = false;
    bool quiet = false;
};

// Parses the command line; nullopt when --help or --version answered it.
std::optional<Options> parse(int argc, char** argv)
{
    Options o;
    standalone::ProgramOptions cli("quell-render", "usage: quell-render --mic MIC.wav --ref REF.wav --out OUT.wav [options]",
                                   standalone::ProgramOptions::versionLine("quell-render"));
    cli.text("--mic", "MIC.wav", o.mic, "the microphone (1 or 2 channels; '-': standard input)");
    cli.text("--ref", "REF.wav", o.ref, "the far end, what the loudspeaker plays (1 or 2 channels; '-': standard input)");
    cli.text("--out", "OUT.wav", o.out, "the echo-cancelled microphone ('-': WAV on standard output)");
    cli.option("--rate", "HZ", "the canceller's own rate (default 16000; 'input' = the files' rate, full band)",
               [&o](const std::string& v) {
                   o.rateFromInput = v == "input";
                   if (!o.rateFromInput)
                       o.cancellerRate = io::parseInt("--rate", v, aec::kMinSampleRate, aec::kMaxSampleRate);
               });
    cli.flag("--mono-far-end", o.monoFarEnd, "mix a stereo far end to mono (default: one filter over both channels)");
    cli.text("--metrics", "M.json", o.metrics, "ERLE per 100 ms, the settings and the timings as JSON");
    cli.flag("--quiet", o.quiet, "no progress bar and no summary");
    cli.group("Many files");
    cli.text("--batch", "LIST.tsv", o.batch, "render every line of LIST: MIC<tab>REF<tab>OUT[<tab>METRICS] (instead of --mic, --ref, --out)");
    cli.text("--shard", "K/N", o.shard, "only the lines whose number (from 0) modulo N is K: one of N machines or array tasks");
    cli.option("--jobs", "J", "files rendered at once (default 1)",
               [&o](const std::string& v) { o.jobs = io::parseInt("--jobs", v, 1, 64); });
    cli.option("--calls", "S",
               "render the files together as S calls of one many-calls engine (engine::MultiStreamCanceller:\n"
               "on a GPU one filter batch for all of them; a stereo microphone takes two; instead of --jobs)",
               [&o](const std::string& v) { o.calls = io::parseInt("--calls", v, 1, 65536); });
    cli.group("Canceller options");
    standalone::addCancellerOptions(cli, o.aec, standalone::CancellerUse::Offline);
    cli.notes("OUT's extension picks the container (.wav, .flac, .ogg, .aiff, .caf, .w64, .au); the output has\n"
              "the microphone's rate, channels, sample format (where the container takes it) and length.\n"
              "'-' as MIC or REF reads that file from standard input; '-' as OUT writes WAV to standard output\n"
              "(the summary then goes to standard error).\n"
              "Exit codes: 0 done; 2 bad usage or bad input (nothing written); 1 a failure while processing\n"
              "(nothing written).\n"
              "--batch: relative paths in LIST are taken from LIST's folder; a line whose OUT (and METRICS) exists\n"
              "is skipped, so running the same command again resumes a run that stopped. Exit codes: 0 every\n"
              "file done, 1 some failed (each named at the end), 2 a bad list.");
    if (!cli.parse(argc, argv))
        return std::nullopt;
    if (!o.batch.empty()) {
        if (!o.mic.empty() || !o.ref.empty() || !o.out.empty() || !o.metrics.empty())
            throw io::UsageError("--batch takes the files from its list: no --mic, --ref, --out or --metrics with it");
        if (o.calls > 0 && o.jobs != 1)
            throw io::UsageError("--calls renders the files together in one engine: no --jobs with it");
        if (o.calls > 0 && (o.rateFromInput || o.cancellerRate != aec::kCancellerRate))
            throw io::UsageError("--calls runs every file's canceller at 16000 Hz: no --rate with it");
        if (!o.shard.empty())
            standalone::parseShard(o.shard);   // a bad K/N is a usage error before any work
        return o;
    }
    if (!o.shard.empty() || o.jobs != 1 || o.calls > 0)
        throw io::UsageError("--shard, --jobs and --calls go with --batch");
    if (o.mic.empty() || o.ref.empty() || o.out.empty())
        throw io::UsageError("--mic, --ref and --out are required (see --help)");
    if (o.mic == "-" && o.ref == "-")
        throw io::UsageError("--mic and --ref cannot both be '-': standard input carries one file");
    if (o.metrics == "-")
        throw io::UsageError("--metrics needs a file name ('-' is for audio only)");
    return o;
}

// OUT may not exist yet: compare normalised paths as well as file identity.
bool samePath(const std::string& a, const std::string& b)
{
    if (a == "-" || b == "-")
        return false;   // standard input and output are no files
    std::error_code ec1, ec2;
    const auto ca = std::filesystem::weakly_canonical(a, ec1);
    const auto cb = std::filesystem::weakly_canonical(b, ec2);
    if (!ec1 && !ec2 && ca == cb)
        return true;
    return io::sameFile(a, b);
}

// What the metrics say of the canceller that ran: a lone engine's, or a many-calls engine's call.
struct CancellerReport {
    aec::EchoCancellerSettings settings{};
    int farEndChannels = 1, cancellerRate = aec::kCancellerRate, latencySamples = 0;
    std::string mode;
    dsp::RlsHealth health{};
};

CancellerReport reportOf(const engine::RealtimeEngine& engine)
{
    return {engine.cancellerSettings(), engine.spec().farEndChannels, engine.spec().cancellerRate, engine.latencySamples(),
            engine.stats().mode, engine.health()};
}

void writeMetrics(const std::string& path, const Options& o, const io::AudioFormat& fmt, std::size_t frames,
                  const CancellerReport& report, const aec::ErleReport& erle, double seconds, double wall)
{
    const aec::EchoCancellerSettings& c = report.settings;
    const dsp::RlsHealth& h = report.health;
    nlohmann::ordered_json perFrame = nlohmann::ordered_json::array();
    for (const auto& db : erle.perFrameDb)
        perFrame.push_back(db ? nlohmann::ordered_json(*db) : nlohmann::ordered_json(nullptr));
    // NaN and infinity are written as null (nlohmann's dump), as JSON has neither.
    const nlohmann::ordered_json metrics = {
        {"input", {{"mic", o.mic}, {"ref", o.ref}, {"sample_rate", fmt.sampleRate}, {"channels", fmt.channels},
                   {"frames", frames}, {"seconds", seconds}}},
        {"settings", {{"taps", c.taps}, {"lambda", aec::effectiveLambda(c, report.farEndChannels)}, {"delta", aec::effectiveDelta(c, c.taps * report.farEndChannels)},
                      {"canceller_rate", report.cancellerRate}, {"high_pass_hz", c.highPassHz},
                      {"suppression_db", c.suppressor.enabled ? c.suppressor.maxAttenuationDb : 0.0},
                      {"comfort_noise", c.suppressor.enabled && c.suppressor.comfortNoise},
                      {"distortion_model", c.distortionFilter}, {"backend_requested", aec::toString(o.aec.backend)},
                      {"backend", report.mode}, {"latency_samples", report.latencySamples}}},
        {"timings", {{"wall_seconds", wall}, {"real_time_factor", wall / seconds}}},
        {"health", {{"reinitialisations", h.reinitialisations}, {"paused_samples", h.pausedSamples}}},
        {"erle", {{"steady_state_db", erle.steadyStateDb ? nlohmann::ordered_json(*erle.steadyStateDb) : nlohmann::ordered_json(nullptr)},
                  {"warmup_seconds", 1.0}, {"frame_seconds", erle.frameSeconds},
                  {"active_frames", erle.activeFrames}, {"per_frame_db", perFrame}}},
    };
    const std::string tmp = path + ".part";
    {
        std::ofstream f(tmp);
        if (!f)
            throw io::FileError(path + ": cannot create the metrics file");
        // File names need not be UTF-8: bytes that are not become U+FFFD rather than an exception.
        f << metrics.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        if (!f)
            throw io::FileError(path + ": write failed");
    }
    std::filesystem::rename(tmp, path);
}

struct RenderSummary {
    double seconds = 0.0, wall = 0.0;
    std::optional<double> erleDb;
};

// One render's inputs, read and checked: everything that can fail before the work fails here.
struct RenderInput {
    io::AudioData mic, ref;
    std::size_t frames = 0, farFrames = 0;   // the output's length (the microphone's), the far end's used part
    bool mono = true;                        // the far end as one channel (farEndMean)
    std::vector<float> farEndMean;           // the far end's channels' mean, `frames` long (silent past its end)
    // The far end's level over its channels, `frames` long: the ERLE meter's activity signal, what the
    // loudspeakers play (the mean of a stereo far end whose channels cancel reads as silence while both play).
    std::vector<float> farLevel;
};

// Everything that can fail before the work is checked before it: where the results go (checkOutputs,
// before the inputs are read), and in what (checkInputFormats, once their formats are known).
void checkOutputs(const Options& o)
{
    if (samePath(o.out, o.mic) || samePath(o.out, o.ref))
        throw io::UsageError(o.out + ": the output would overwrite an input file; choose another --out path");
    if (!o.metrics.empty() && (samePath(o.metrics, o.mic) || samePath(o.metrics, o.ref) || samePath(o.metrics, o.out)))
        throw io::UsageError(o.metrics + ": the metrics file would overwrite an audio file");
    if (o.out != "-")
        io::requireWritableFolder(o.out);
    if (!o.metrics.empty())
        io::requireWritableFolder(o.metrics);
}

void checkInputFormats(const Options& o, const io::AudioFormat& mic, const io::AudioFormat& ref)
{
    if (mic.channels > kMaxMicChannels)
        throw io::FileError(o.mic + ": has " + std::to_string(mic.channels) + " channels; the microphone may have 1 or 2");
    if (ref.channels > kMaxRefChannels)
        throw io::FileError(o.ref + ": has " + std::to_string(ref.channels) + " channels; the far-end reference may have 1 or 2");
    if (mic.sampleRate != ref.sampleRate)
        throw io::FileError(o.ref + ": sample rate " + std::to_string(ref.sampleRate) + " Hz differs from " + o.mic + " ("
                            + std::to_string(mic.sampleRate) + " Hz); resample one of them first");
    io::outputFormatFor(o.out, mic);   // an OUT this container cannot hold fails here, not after the work
}

// The far end's channels' mean into out (out.size() frames): the far end when it is mixed to mono.
void mixFarEnd(const std::vector<std::span<const float>>& channels, std::span<float> out)
{
    for (std::size_t i = 0; i < out.size(); ++i) {
        float sum = 0.0f;
        for (const auto& ch : channels)
            sum += ch[i];
        out[i] = sum / static_cast<float>(channels.size());
    }
}

// Frame i's root-mean-square over the channels: what the ERLE meter hears of a many-channel signal.
template <typename Channels>
float levelOverChannels(const Channels& channels, std::size_t i)
{
    double sum = 0.0;
    for (const auto& ch : channels)
        sum += static_cast<double>(ch[i]) * ch[i];
    return static_cast<float>(std::sqrt(sum / static_cast<double>(std::size(channels))));
}

RenderInput readInput(const Options& o)
{
    checkOutputs(o);
    RenderInput in;
    in.mic = io::readAudio(o.mic);
    in.ref = io::readAudio(o.ref);
    const io::AudioData& mic = in.mic;
    const io::AudioData& ref = in.ref;
    checkInputFormats(o, mic.format, ref.format);
    // The output has the microphone's length: past the far end's end the far end is silent, and a
    // longer far end's extra is not used.
    in.frames = mic.frames();
    if (ref.frames() < in.frames && !o.quiet)
        std::fprintf(stderr, "note: %s has %zu frames and %s %zu; the far end is taken as silent after its end\n",
                     o.ref.c_str(), ref.frames(), o.mic.c_str(), in.frames);
    else if (ref.frames() > in.frames && !o.quiet)
        std::fprintf(stderr, "note: %s has %zu frames and %s %zu; its last %zu are not used\n", o.ref.c_str(), ref.frames(),
                     o.mic.c_str(), in.frames, ref.frames() - in.frames);
    in.farFrames = std::min(in.frames, ref.frames());
    // A stereo far end is one two-channel echo path (aec/EchoCanceller.h), on the GPU or the CPU.
    in.mono = ref.format.channels == 1 || o.monoFarEnd;
    in.farEndMean.assign(in.frames, 0.0f);
    mixFarEnd({ref.channels.begin(), ref.channels.end()}, std::span<float>(in.farEndMean).first(in.farFrames));
    in.farLevel.assign(in.frames, 0.0f);
    for (std::size_t i = 0; i < in.farFrames; ++i)
        in.farLevel[i] = levelOverChannels(ref.channels, i);
    return in;
}

// Per-sample root-mean-square over the microphone channels: one ERLE for the whole file.
aec::ErleReport measureErle(const RenderInput& in, const std::vector<std::vector<float>>& out)
{
    aec::ErleMeter meter(in.mic.format.sampleRate);
    std::vector<float> micPow(in.frames), outPow(in.frames);
    for (std::size_t i = 0; i < in.frames; ++i) {
        micPow[i] = levelOverChannels(in.mic.channels, i);
        outPow[i] = levelOverChannels(out, i);
    }
    meter.add(micPow, outPow, in.farLevel);
    return meter.report();
}

// OUT and its metrics, all or nothing: no OUT without its metrics, no metrics without OUT. Standard
// output cannot be taken back once written, so there the metrics go first.
void writeResults(const Options& o, const RenderInput& in, const std::vector<std::vector<float>>& out, const CancellerReport& report,
                  const aec::ErleReport& erle, double wall)
{
    const double seconds = static_cast<double>(in.frames) / in.mic.format.sampleRate;
    const bool toStandardOutput = o.out == "-";
    if (toStandardOutput && !o.metrics.empty())
        writeMetrics(o.metrics, o, in.mic.format, in.frames, report, erle, seconds, wall);
    try {
        io::writeAudioAtomically(o.out, io::outputFormatFor(o.out, in.mic.format), out);
    } catch (...) {
        if (toStandardOutput && !o.metrics.empty())
            std::filesystem::remove(o.metrics);
        throw;
    }
    if (!toStandardOutput && !o.metrics.empty()) {
        try {
            writeMetrics(o.metrics, o, in.mic.format, in.frames, report, erle, seconds, wall);
        } catch (...) {
            std::filesystem::remove(o.out);
            throw;
        }
    }
}

RenderSummary run(const Options& o)
{
    const RenderInput in = readInput(o);
    const io::AudioData& mic = in.mic;
    const std::size_t frames = in.frames;
    const io::AudioFormat outFormat = io::outputFormatFor(o.out, mic.format);

    const int rate = mic.format.sampleRate;
    // The real-time engine in offline mode: the same samples as a live run, with no deadlines.
    engine::EngineSpec spec;
    spec.hostRate = rate;
    spec.micChannels = mic.format.channels;
    spec.maxHostBlock = static_cast<int>(kBlock);
    spec.aec = o.aec;
    spec.offline = true;
    spec.cancellerRate = o.rateFromInput ? rate : o.cancellerRate;
    spec.farEndChannels = in.mono ? 1 : in.ref.format.channels;
    engine::RealtimeEngine engine;
    engine.prepare(spec);
    if (!engine.fallbackReason().empty() && !o.quiet)
        std::fprintf(stderr, "note: --backend auto: using the CPU (%s)\n", engine.fallbackReason().c_str());

    std::vector<const std::vector<float>*> farEnd;
    if (in.mono)
        farEnd.push_back(&in.farEndMean);
    else
        for (const auto& ch : in.ref.channels)
            farEnd.push_back(&ch);

    const std::size_t latency = static_cast<std::size_t>(engine.latencySamples());
    const std::size_t total = frames + latency; // flush the resamplers' delay out at the end
    const std::size_t micCh = mic.channels.size();
    std::vector<std::vector<float>> out(micCh, std::vector<float>(frames));
    std::vector<std::vector<float>> inBlock(micCh, std::vector<float>(kBlock)), outBlock(micCh, std::vector<float>(kBlock));
    std::vector<std::vector<float>> refBlock(farEnd.size(), std::vector<float>(kBlock));
    std::vector<const float*> refPtrs(farEnd.size());
    std::vector<const float*> inPtrs(micCh);
    std::vector<float*> outPtrs(micCh);

    io::ProgressBar bar(stderr, "cancelling");
    if (o.quiet) bar.finish();
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t pos = 0; pos < total; pos += kBlock) {
        const std::size_t n = std::min(kBlock, total - pos);
        for (std::size_t c = 0; c < micCh; ++c) {
            for (std::size_t i = 0; i < n; ++i)
                inBlock[c][i] = pos + i < frames ? mic.channels[c][pos + i] : 0.0f;
            inPtrs[c] = inBlock[c].data();
            outPtrs[c] = outBlock[c].data();
        }
        for (std::size_t r = 0; r < farEnd.size(); ++r) {
            for (std::size_t i = 0; i < n; ++i)
                refBlock[r][i] = pos + i < in.farFrames ? (*farEnd[r])[pos + i] : 0.0f;
            refPtrs[r] = refBlock[r].data();
        }
        engine.process(inPtrs.data(), refPtrs.data(), outPtrs.data(), static_cast<int>(n));
        // Output sample t corresponds to input sample t - latency.
        for (std::size_t c = 0; c < micCh; ++c)
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t t = pos + i;
                if (t >= latency && t - latency < frames)
                    out[c][t - latency] = outBlock[c][i];
            }
        bar.update(static_cast<double>(pos + n) / static_cast<double>(total));
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bar.finish();

    const aec::ErleReport erle = measureErle(in, out);
    writeResults(o, in, out, reportOf(engine), erle, wall);
    const double seconds = static_cast<double>(frames) / rate;
    const bool toStandardOutput = o.out == "-";

    RenderSummary summary{seconds, wall, erle.steadyStateDb};
    if (!o.quiet) {
        // With the audio on standard output, the summary goes to standard error.
        std::FILE* report = toStandardOutput ? stderr : stdout;
        std::fprintf(report, "wrote %s: %.2f s, %d Hz, %d channel%s, %s\n", toStandardOutput ? "standard output (WAV)" : o.out.c_str(),
                     seconds, rate, mic.format.channels, mic.format.channels > 1 ? "s" : "", outFormat.subtypeName.c_str());
        const aec::EchoCancellerSettings a = engine.cancellerSettings();
        const int cancellerRate = engine.spec().cancellerRate;
        char lambda[40] = "";   // (the Kalman filter and NLMS have none)
        if (engine.runsRls())
            std::snprintf(lambda, sizeof lambda, ", lambda %g", aec::effectiveLambda(a, engine.spec().farEndChannels));
        std::fprintf(report, "echo canceller: %s at %d Hz%s%s\n", engine.stats().mode.c_str(), cancellerRate, lambda,
                     cancellerRate != rate ? " (resampled from and back to the file's rate)" : "");
        std::fprintf(report, "processing: %.2f s for %.2f s of audio, real-time factor %.3f\n", wall, seconds, wall / seconds);
        if (erle.steadyStateDb)
            std::fprintf(report, "ERLE (steady state, far end active, after the first 1.0 s): %.1f dB\n", *erle.steadyStateDb);
        else
            std::fprintf(report, "ERLE: not measured (the far end is never active after the first 1.0 s)\n");
    }
    return summary;
}

// A batch's line for a file that failed, as it prints and as the summary repeats it.
std::string failureLine(const standalone::BatchJob& job, int code, const std::string& message)
{
    return job.out + " (line " + std::to_string(job.line) + "): exit " + std::to_string(code) + ", " + message;
}

// A batch's ERLE for a file that is done.
std::string erleText(const std::optional<double>& steadyStateDb)
{
    char text[48] = "ERLE not measured";
    if (steadyStateDb)
        std::snprintf(text, sizeof text, "ERLE %.1f dB", *steadyStateDb);
    return text;
}

// The per-file options of a batch job: its files, quiet.
Options jobOptions(const Options& base, const standalone::BatchJob& job)
{
    // An archive's output tree is made as it fills (readInput still checks that it can write there).
    std::error_code ignored;
    for (const std::string& path : {job.out, job.metrics})
        if (!path.empty() && std::filesystem::path(path).has_parent_path())
            std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
    Options o = base;
    o.batch.clear();
    o.mic = job.mic;
    o.ref = job.ref;
    o.out = job.out;
    o.metrics = job.metrics;
    o.quiet = true;
    return o;
}

// A --calls file as a recording of the many-calls engine: read, cancelled and written a few thousand
// frames at a time (the output to a temporary file renamed into place by finish()), its ERLE measured as
// the outputs come, so that memory does not grow with the file's length. The checks are readInput's, made
// when it opens, before any work.
class FileRecording final : public engine::CallRecording {
public:
    explicit FileRecording(const Options& o)
        : o_(checked(o)), mic_(o_.mic), ref_(o_.ref), meter_(mic_.format().sampleRate)
    {
        checkInputFormats(o, mic_.format(), ref_.format());
        if (ref_.format().channels > 1 && !o.monoFarEnd)
            throw io::UsageError(o.ref + ": a stereo far end; --calls takes one far-end channel (--mono-far-end mixes it)");
        out_.emplace(o.out, io::outputFormatFor(o.out, mic_.format()), mic_.format().channels);
        farFrames_ = std::min(mic_.frames(), ref_.frames());
        refRead_.assign(static_cast<std::size_t>(ref_.format().channels), std::vector<float>(engine::OfflineCallBatch::kReadFrames));
    }
    int sampleRate() const override { return mic_.format().sampleRate; }
    int micChannels() const override { return mic_.format().channels; }
    double seconds() const { return static_cast<double>(mic_.frames()) / mic_.format().sampleRate; }

    std::size_t read(std::span<const std::span<float>> mic, std::span<float> far) override
    {
        const std::size_t n = mic_.read(mic);
        // The far end past its end is silent; a longer far end's extra is not used.
        const std::size_t farHere = std::min(n, farFrames_ - std::min(farFrames_, ref_.position()));
        std::fill(far.begin(), far.begin() + static_cast<std::ptrdiff_t>(n), 0.0f);
        if (farHere > 0) {
            std::vector<std::span<float>> refs;
            for (auto& r : refRead_)
                refs.emplace_back(r.data(), farHere);
            if (ref_.read(refs) != farHere)
                throw io::FileError(o_.ref + ": ended before its length");
            mixFarEnd({refs.begin(), refs.end()}, far.first(farHere));
        }
        // The ERLE meter's inputs wait for their outputs: the microphone's level over its channels, and
        // the far end.
        for (std::size_t i = 0; i < n; ++i) {
            micLevel_.push_back(levelOverChannels(mic, i));
            farLevel_.push_back(far[i]);
        }
        return n;
    }

    void write(std::span<const std::span<const float>> out) override
    {
        out_->write(out);
        const std::size_t n = out[0].size();
        outLevel_.resize(n);
        for (std::size_t i = 0; i < n; ++i)
            outLevel_[i] = levelOverChannels(out, i);
        meter_.add(std::span<const float>(micLevel_).first(n), outLevel_, std::span<const float>(farLevel_).first(n));
        micLevel_.erase(micLevel_.begin(), micLevel_.begin() + static_cast<std::ptrdiff_t>(n));
        farLevel_.erase(farLevel_.begin(), farLevel_.begin() + static_cast<std::ptrdiff_t>(n));
    }

    // OUT into place and its metrics, all or nothing (as writeResults).
    aec::ErleReport finish(const CancellerReport& report, double wall)
    {
        if (out_->frames() != mic_.frames())
            throw std::logic_error(o_.out + ": " + std::to_string(out_->frames()) + " frames written of " + std::to_string(mic_.frames()));
        const aec::ErleReport erle = meter_.report();
        out_->commit();
        if (!o_.metrics.empty()) {
            try {
                writeMetrics(o_.metrics, o_, mic_.format(), mic_.frames(), report, erle, seconds(), wall);
            } catch (...) {
                std::filesystem::remove(o_.out);
                throw;
            }
        }
        return erle;
    }

private:
    // readInput's checks of where the results go, before the input files open (o_ is made first).
    static const Options& checked(const Options& o)
    {
        for (const std::string* p : {&o.mic, &o.ref, &o.out, &o.metrics})
            if (*p == "-")
                throw io::UsageError("--calls reads and writes files, not standard input or output ('-')");
        checkOutputs(o);
        return o;
    }

    Options o_;
    io::AudioFileReader mic_, ref_;
    aec::ErleMeter meter_;
    std::optional<io::AudioFileWriter> out_;
    std::size_t farFrames_ = 0;
    std::vector<std::vector<float>> refRead_;
    std::vector<float> micLevel_, farLevel_, outLevel_;
};

// --batch --calls S: the shard's files as the calls of one OfflineCallBatch, as many at once as its S
// streams take (a stereo microphone takes two), a file joining as soon as one leaves. Each file's output
// is a lone render's with the same settings (engine/OfflineCallBatch.h), an automatic length included.
// Files are read and written as they go (FileRecording). A line per file as it ends, then the failures
// again.
int runCalls(const Options& base, const std::vector<standalone::BatchJob>& mine)
{
    engine::MultiStreamSettings settings;
    settings.canceller = base.aec;
    if (settings.canceller.taps == 0) {   // a lone render's automatic length, not the engine's 1024
        const aec::FilterPlanResult planned = aec::planLinearFilter(base.aec, {aec::kCancellerRate, 160, 1});
        if (planned.ok())
            settings.canceller.taps = planned.plan.tapsPerChannel();
    }
    settings.maxStreams = base.calls;
    // Each running file holds three open (microphone, far end, output): the soft limit is raised where it
    // is lower than S of them need, and S refused where the hard limit is too.
    const rlim_t need = 3 * static_cast<rlim_t>(base.calls) + 64;
    if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY && files.rlim_cur < need) {
        files.rlim_cur = files.rlim_max == RLIM_INFINITY ? need : std::min(need, files.rlim_max);
        ::setrlimit(RLIMIT_NOFILE, &files);
        if (files.rlim_cur < need)
            throw io::UsageError("--calls " + std::to_string(base.calls) + " keeps up to " + std::to_string(3 * base.calls)
                                 + " files open, and this process may open " + std::to_string(files.rlim_cur)
                                 + " (ulimit -n); use fewer calls");
    }
    engine::OfflineCallBatch batch;
    batch.prepare(settings);
    const engine::MultiStreamCanceller& calls = batch.engine();
    std::printf("calls: %d streams of %s%s\n", calls.maxStreams(), calls.description().c_str(),
                calls.plan().fallbackReason.empty() ? "" : (" (the CPU's: " + calls.plan().fallbackReason + ")").c_str());
    std::fflush(stdout);
    struct Running {
        const standalone::BatchJob* job = nullptr;
        std::chrono::steady_clock::time_point joined;
    };
    std::map<int, Running> running;
    std::size_t next = 0, finished = 0, done = 0, skipped = 0;
    double audioSeconds = 0.0;
    std::vector<std::string> failures;
    const auto fail = [&](const standalone::BatchJob& job, int code, const std::string& message) {
        failures.push_back(failureLine(job, code, message));
        std::printf("[%zu/%zu] %s\n", ++finished, mine.size(), failures.back().c_str());
        std::fflush(stdout);
    };
    const auto t0 = std::chrono::steady_clock::now();
    auto lastStatus = t0;
    std::size_t blocks = 0;
    std::unique_ptr<FileRecording> waiting;   // opened, waiting for streams to free
    while (next < mine.size() || waiting || !batch.idle()) {
        // Long files print nothing until they end: a line on standard error every 10 s says where it is.
        if (++blocks % 100 == 0 && std::chrono::steady_clock::now() - lastStatus > std::chrono::seconds(10)) {
            lastStatus = std::chrono::steady_clock::now();
            std::fprintf(stderr, "calls: %zu of %zu files finished, %zu running, %.0f s of audio into the run\n", finished, mine.size(),
                         running.size(), static_cast<double>(blocks) * 0.01);
        }
        // Files join while their channels fit; one that can never fit fails by itself.
        while (next < mine.size() || waiting) {
            const standalone::BatchJob& job = mine[waiting ? next - 1 : next];
            if (!waiting) {
                ++next;
                if (standalone::alreadyDone(job)) {
                    ++skipped;
                    std::printf("[%zu/%zu] %s: skipped, done earlier\n", ++finished, mine.size(), job.out.c_str());
                    continue;
                }
                try {
                    waiting = std::make_unique<FileRecording>(jobOptions(base, job));
                    if (waiting->micChannels() > calls.maxStreams())
                        throw io::UsageError(job.mic + ": " + std::to_string(waiting->micChannels()) + " channels, more than --calls "
                                             + std::to_string(calls.maxStreams()));
                } catch (...) {
                    waiting.reset();
                    const io::ExceptionReport described = io::describeCurrentException();
                    fail(job, described.exitCode, described.message);
                    continue;
                }
            }
            if (waiting->micChannels() > batch.freeStreams())
                break;   // it waits for a file to leave
            try {
                const int id = batch.add(std::move(waiting));
                running.emplace(id, Running{&job, std::chrono::steady_clock::now()});
            } catch (const std::invalid_argument& e) {   // a rate the canceller cannot take: that file alone
                fail(job, 2, e.what());
            }
            waiting.reset();
        }
        for (engine::OfflineCallBatch::Finished& f : batch.step()) {
            const Running r = running.at(f.id);
            running.erase(f.id);
            auto& file = static_cast<FileRecording&>(*f.recording);
            if (!f.error.empty()) {   // its files could not be read or written on: that file alone
                fail(*r.job, 1, f.error);
                continue;
            }
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.joined).count();
            try {
                const CancellerReport report{calls.canceller(0).settings(), 1, aec::kCancellerRate, f.latencySamples, calls.description(),
                                             f.health};
                const aec::ErleReport erle = file.finish(report, wall);
                ++done;
                audioSeconds += file.seconds();
                std::printf("[%zu/%zu] %s: %s, %.2f s of audio\n", ++finished, mine.size(), r.job->out.c_str(),
                            erleText(erle.steadyStateDb).c_str(), file.seconds());
                std::fflush(stdout);
            } catch (...) {
                const io::ExceptionReport described = io::describeCurrentException();
                fail(*r.job, described.exitCode, described.message);
            }
        }
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("batch: %zu done, %zu skipped (done earlier), %zu failed; %.1f s of audio in %.1f s (%.1f x real time)\n", done, skipped,
                failures.size(), audioSeconds, wall, wall > 0.0 ? audioSeconds / wall : 0.0);
    for (const std::string& f : failures)
        std::printf("failed: %s\n", f.c_str());
    return failures.empty() ? 0 : 1;
}

// Every job of this run's shard, `jobs` at a time; a line per file as it ends, then the failures again.
int runBatch(const Options& base)
{
    const std::vector<standalone::BatchJob> all = standalone::readBatchList(base.batch);
    const standalone::Shard shard = base.shard.empty() ? standalone::Shard{} : standalone::parseShard(base.shard);
    const std::vector<standalone::BatchJob> mine = standalone::jobsOfShard(all, shard);
    // Every file gets the automatic length the first one got (FilterPlan.h says why).
    aec::rememberGpuSpeedMeasurements(true);
    std::printf("batch %s: %zu file%s%s\n", base.batch.c_str(), mine.size(), mine.size() == 1 ? "" : "s",
                shard.count > 1 ? (", shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) + " of "
                                   + std::to_string(all.size())).c_str()
                                : "");
    std::fflush(stdout);
    if (base.calls > 0)
        return runCalls(base, mine);
    std::mutex report;
    std::atomic<std::size_t> next{0};
    std::size_t finished = 0, done = 0, skipped = 0;
    std::vector<std::string> failures;
    const auto worker = [&] {
        for (std::size_t i = next++; i < mine.size(); i = next++) {
            const standalone::BatchJob& job = mine[i];
            if (standalone::alreadyDone(job)) {
                const std::lock_guard<std::mutex> lock(report);
                ++skipped;
                std::printf("[%zu/%zu] %s: skipped, done earlier\n", ++finished, mine.size(), job.out.c_str());
                std::fflush(stdout);
                continue;
            }
            const Options o = jobOptions(base, job);
            std::string message;
            int code = 0;
            RenderSummary r;
            try {
                r = run(o);
            } catch (const aec::BackendUnavailable& e) {
                message = e.what();
                code = 2;
            } catch (...) {
                const io::ExceptionReport described = io::describeCurrentException();
                message = described.message;
                code = described.exitCode;
            }
            const std::lock_guard<std::mutex> lock(report);
            ++finished;
            if (code == 0) {
                ++done;
                std::printf("[%zu/%zu] %s: %s, %.2f s of audio at %.3f x real time\n", finished, mine.size(), job.out.c_str(),
                            erleText(r.erleDb).c_str(), r.seconds, r.wall / r.seconds);
            } else {
                failures.push_back(failureLine(job, code, message));
                std::printf("[%zu/%zu] %s\n", finished, mine.size(), failures.back().c_str());
            }
            std::fflush(stdout);
        }
    };
    std::vector<std::thread> threads;
    for (int t = 1; t < base.jobs && static_cast<std::size_t>(t) < mine.size(); ++t)
        threads.emplace_back(worker);
    worker();
    for (auto& t : threads)
        t.join();
    std::printf("batch: %zu done, %zu skipped (done earlier), %zu failed\n", done, skipped, failures.size());
    for (const std::string& f : failures)
        std::printf("failed: %s\n", f.c_str());
    return failures.empty() ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        const std::optional<Options> options = parse(argc, argv);
        if (!options)
            return 0;
        if (!options->batch.empty())
            return runBatch(*options);
        run(*options);
        return 0;
    } catch (const aec::BackendUnavailable& e) {
        std::fprintf(stderr, "quell-render: %s\n", e.what());
        return 2;
    } catch (...) {
        return io::reportCurrentException("quell-render");
    }
}
