// SPDX-License-Identifier: GPL-3.0-or-later
// quell-live: the hands-free echo canceller on real audio devices (PortAudio).
//   quell-live --list-devices
//   quell-live [--input DEV] [--output DEV] [--host-api NAME] --far-end FILE.wav [--record OUT.wav]
//              [--taps N] [--lambda L] [--backend cpu|gpu|auto] [--filter F] [--rate HZ] [--block N]
//              [--safety-blocks N|auto] [--seconds S]
//              [--suppression DB] [--no-comfort-noise]
//   quell-live ... --far-end-device DEV   (the far end from a capture device, e.g. a loopback of the call app)
// Plays the far-end file to the output device, captures the microphone, cancels the far end's echo and
// records the cleaned microphone. Ctrl-C or SIGTERM ends cleanly with a complete WAV.
#include <portaudio.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "CancellerOptions.h"
#include "aec/Backend.h"
#include "aec/FilterKind.h"
#include "dsp/PolyphaseResampler.h"
#include "engine/RealtimeEngine.h"
#include "dsp/SpscRing.h"
#include "io/CommandLine.h"
#include "io/StreamingWavWriter.h"
#include "io/WavFile.h"

using namespace quell;

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};   // the signal that stopped the run (the exit code is 128 + it, as a shell's)
extern "C" void onSignal(int signal)
{
    g_signal.store(signal);
    g_stop.store(true);
}

class DeviceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Options {
    std::string input, output, hostApi, farEndFile, farEndDevice, record;
    aec::EchoCancellerSettings aec{};
    int block = 256;
    int safetyBlocks = -1;  // -1: engine::automaticSafetyBlocks for the rate and block
    int rate = 0;         // 0: the far-end file's rate, else 48000
    double seconds = 0.0; // 0: until the far-end file ends (or Ctrl-C with --far-end-device)
    bool listDevices = false;
    bool verbose = false;   // the audio back-end's own diagnostics on stderr
};

// PortAudio's lifetime as an object: Pa_Terminate runs on every exit path.
struct PortAudioSession {
    explicit PortAudioSession(bool verbose)
    {
        // PortAudio's device scan makes ALSA and JACK print tens of lines on stderr about cards and
        // servers that are not there (on every start, whatever is then used): they go to /dev/null for
        // the scan unless --verbose. What fails is reported from Pa_Initialize's result and from opening
        // the streams.
        const int saved = verbose ? -1 : ::dup(STDERR_FILENO);
        const int null = verbose ? -1 : ::open("/dev/null", O_WRONLY);
        if (saved >= 0 && null >= 0)
            ::dup2(null, STDERR_FILENO);
        const PaError e = Pa_Initialize();
        if (saved >= 0 && null >= 0)
            ::dup2(saved, STDERR_FILENO);
        if (null >= 0)
            ::close(null);
        if (saved >= 0)
            ::close(saved);
        if (e != paNoError)
            throw DeviceError(std::string("cannot start PortAudio: ") + Pa_GetErrorText(e));
    }
    ~PortAudioSession() { Pa_Terminate(); }
};

// Parses the command line; nullopt when --help or --version answered it.
std::optional<Options> parse(int argc, char** argv)
{
    Options o;
    o.aec.cpuRealtimeBudget = 0.5; // half a core at most for the CPU canceller (see CpuFilterChoice.h)
    standalone::ProgramOptions cli(
        "quell-live",
        "usage: quell-live --list-devices\n"
        "       quell-live [--input DEV] [--output DEV] [--host-api NAME] --far-end FILE.wav [--record OUT.wav]\n"
        "                  [canceller options] [--rate HZ] [--block N] [--safety-blocks N|auto] [--seconds S]\n"
        "       quell-live [--input DEV] --far-end-device DEV [--record OUT.wav] [...]",
        standalone::ProgramOptions::versionLine("quell-live"));
    cli.flag("--list-devices", o.listDevices, "list the audio devices and exit");
    cli.text("--input", "DEV", o.input, "the microphone's capture device (default: the system's default input)");
    cli.text("--output", "DEV", o.output, "the device that plays the far end (default: the system's default output)");
    cli.text("--host-api", "NAME", o.hostApi, "pick devices of this host API only (alsa, jack, ...)");
    cli.text("--far-end", "FILE.wav", o.farEndFile, "the far end to play to the output device");
    cli.text("--far-end-device", "DEV", o.farEndDevice,
             "take the far end from this capture device instead (a loopback of the call app);\n"
             "nothing is played");
    cli.text("--record", "OUT.wav", o.record, "record the cleaned microphone (16-bit WAV at the device rate)");
    cli.integer("--rate", "HZ", o.rate, 8000, 192000, "the device rate (default: the device's own; the far-end file is resampled to it)");
    cli.integer("--block", "N", o.block, 16, 4096, "the host block in samples (default 256)");
    cli.option("--safety-blocks", "N|auto",
               "0 to 4: N more host blocks of latency, N more block periods for the canceller to\n"
               "deliver each block in (default auto: 1 for blocks under 4 ms, e.g. 128 samples at\n"
               "48 kHz, else 0)",
               [&o](const std::string& v) {
                   o.safetyBlocks = v == "auto" ? -1 : io::parseInt("--safety-blocks", v, 0, engine::RealtimeEngine::kMaxSafetyBlocks);
               });
    cli.number("--seconds", "S", o.seconds, 0.1, 1e7, "stop after S seconds (default: when the far-end file ends)");
    cli.flag("--verbose", o.verbose, "keep the audio back-end's own messages (ALSA, JACK) on stderr; by default\n"
                                     "its device scan's are dropped");
    cli.group("Canceller options");
    standalone::addCancellerOptions(cli, o.aec, standalone::CancellerUse::Realtime);
    cli.notes("DEV is a device number from --list-devices or part of its name.\n"
              "Exit codes: 0 finished; 130 / 143 stopped by Ctrl-C / SIGTERM (the recording is complete); 2 bad\n"
              "usage or input; 3 an audio device problem; 1 any other failure.");
    if (!cli.parse(argc, argv))
        return std::nullopt;
    if (!o.listDevices && o.farEndFile.empty() == o.farEndDevice.empty())
        throw io::UsageError("give exactly one far end: --far-end FILE.wav or --far-end-device DEV");
    return o;
}


const PaDeviceInfo* info(PaDeviceIndex i) { return Pa_GetDeviceInfo(i); }

void listDevices()
{
    const PaDeviceIndex n = Pa_GetDeviceCount();
    if (n < 0)
        throw DeviceError(std::string("cannot list audio devices: ") + Pa_GetErrorText(n));
    if (n == 0) {
        std::printf("no audio devices\n");
        return;
    }
    std::printf("%3s  %-40s %-28s %3s %3s %8s\n", "#", "device", "host API", "in", "out", "rate");
    for (PaDeviceIndex i = 0; i < n; ++i) {
        const PaDeviceInfo* d = info(i);
        std::printf("%3d  %-40.40s %-28.28s %3d %3d %8.0f%s%s\n", i, d->name, Pa_GetHostApiInfo(d->hostApi)->name,
                    d->maxInputChannels, d->maxOutputChannels, d->defaultSampleRate,
                    i == Pa_GetDefaultInputDevice() ? "  default in" : "", i == Pa_GetDefaultOutputDevice() ? "  default out" : "");
    }
}

bool contains(const std::string& hay, const std::string& needle)
{
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    };
    return lower(hay).find(lower(needle)) != std::string::npos;
}

// A device by number or by part of its name (and host API), with enough channels in that direction.
PaDeviceIndex findDevice(const std::string& spec, const std::string& hostApi, bool input, PaDeviceIndex fallback)
{
    const PaDeviceIndex n = Pa_GetDeviceCount();
    const char* what = input ? "input" : "output";
    auto usable = [&](PaDeviceIndex i) {
        const PaDeviceInfo* d = info(i);
        return (input ? d->maxInputChannels : d->maxOutputChannels) > 0
               && (hostApi.empty() || contains(Pa_GetHostApiInfo(d->hostApi)->name, hostApi));
    };
    if (spec.empty()) {
        if (!hostApi.empty()) { // the host API's default device for that direction
            for (PaHostApiIndex h = 0; h < Pa_GetHostApiCount(); ++h) {
                const PaHostApiInfo* api = Pa_GetHostApiInfo(h);
                if (contains(api->name, hostApi)) {
                    const PaDeviceIndex d = input ? api->defaultInputDevice : api->defaultOutputDevice;
                    if (d != paNoDevice) return d;
                }
            }
            throw DeviceError(std::string("no ") + what + " device on host API '" + hostApi + "' (see --list-devices)");
        }
        if (fallback == paNoDevice)
            throw DeviceError(std::string("no ") + what + " audio device found (see --list-devices)");
        return fallback;
    }
    char* end = nullptr;
    const long number = std::strtol(spec.c_str(), &end, 10);
    if (*end == '\0' && !spec.empty()) {
        if (number < 0 || number >= n || !usable(static_cast<PaDeviceIndex>(number)))
            throw DeviceError(std::string(what) + " device " + spec + " does not exist or has no " + what + " channels (see --list-devices)");
        return static_cast<PaDeviceIndex>(number);
    }
    for (PaDeviceIndex i = 0; i < n; ++i)
        if (usable(i) && contains(info(i)->name, spec))
            return i;
    throw DeviceError(std::string("no ") + what + " device matches '" + spec + "' (see --list-devices)");
}

// Everything the audio callback touches: fixed at start, no allocation afterwards.
struct LiveState {
    engine::RealtimeEngine* engine = nullptr;
    io::StreamingWavWriter* recorder = nullptr;
    const std::vector<float>* farEnd = nullptr;     // file mode: the whole far end at the device rate
    dsp::SpscRing* farEndRing = nullptr;         // device mode: filled by the far-end capture stream
    std::size_t farEndPos = 0;
    std::size_t totalFrames = 0;                    // stop after this many frames (0: no limit)
    int outputChannels = 0;
    std::vector<float> ref, mic, out;
    std::atomic<std::uint64_t> frames{0};
    std::atomic<std::uint64_t> farEndUnderruns{0};
    std::atomic<bool> finished{false};
};

int audioCallback(const void* input, void* output, unsigned long frameCount, const PaStreamCallbackTimeInfo*,
                  PaStreamCallbackFlags, void* user)
{
    auto& s = *static_cast<LiveState*>(user);
    const auto* in = static_cast<const float*>(input);
    auto* outBuf = static_cast<float*>(output);
    const std::size_t n = std::min<std::size_t>(frameCount, s.ref.size());
    // Far end for this block: what goes to the loudspeaker is exactly the canceller's reference.
    for (std::size_t i = 0; i < n; ++i) {
        float x = 0.0f;
        if (s.farEnd != nullptr) {
            if (!s.farEnd->empty()) x = (*s.farEnd)[s.farEndPos++ % s.farEnd->size()];
        }
        s.ref[i] = x;
        s.mic[i] = in != nullptr ? in[i] : 0.0f;
    }
    if (s.farEndRing != nullptr) {
        if (s.farEndRing->readAvailable() >= n) s.farEndRing->read(s.ref.data(), n);
        else {
            std::fill_n(s.ref.begin(), n, 0.0f);
            s.farEndUnderruns.fetch_add(1, std::memory_order_relaxed);
        }
    }
    if (outBuf != nullptr)
        for (std::size_t i = 0; i < n; ++i)
            for (int c = 0; c < s.outputChannels; ++c)
                outBuf[i * static_cast<std::size_t>(s.outputChannels) + static_cast<std::size_t>(c)] = s.farEnd != nullptr ? s.ref[i] : 0.0f;
    const float* micPtr[1] = {s.mic.data()};
    float* outPtr[1] = {s.out.data()};
    s.engine->process(micPtr, s.ref.data(), outPtr, static_cast<int>(n));
    // With a set duration the last block is cut so the recording is exactly that long.
    const std::uint64_t before = s.frames.load(std::memory_order_relaxed);
    const std::size_t keep = s.totalFrames != 0 ? static_cast<std::size_t>(std::min<std::uint64_t>(n, s.totalFrames - std::min<std::uint64_t>(before, s.totalFrames))) : n;
    if (s.recorder != nullptr)
        s.recorder->push(s.out.data(), keep);
    const std::uint64_t total = s.frames.fetch_add(keep, std::memory_order_relaxed) + keep;
    if (s.totalFrames != 0 && total >= s.totalFrames) {
        s.finished.store(true);
        return paComplete;
    }
    return paContinue;
}

int farEndCaptureCallback(const void* input, void*, unsigned long frameCount, const PaStreamCallbackTimeInfo*,
                          PaStreamCallbackFlags, void* user)
{
    auto* ring = static_cast<dsp::SpscRing*>(user);
    if (input != nullptr)
        ring->write(static_cast<const float*>(input), frameCount);
    return paContinue;
}

struct StreamCloser {
    void operator()(PaStream* s) const
    {
        Pa_StopStream(s);
        Pa_CloseStream(s);
    }
};
using StreamHandle = std::unique_ptr<PaStream, StreamCloser>;

int run(const Options& o)
{
    // Far-end file first: a bad file is reported before any device is touched.
    std::vector<float> farEnd;
    io::AudioData farFile;
    if (!o.farEndFile.empty()) {
        farFile = io::readAudio(o.farEndFile);
        if (farFile.format.channels > 2)
            throw io::FileError(o.farEndFile + ": has " + std::to_string(farFile.format.channels) + " channels; the far end may have 1 or 2");
    }
    if (o.record.empty() == false && !o.farEndFile.empty() && io::sameFile(o.record, o.farEndFile))
        throw io::UsageError(o.record + ": the recording would overwrite the far-end file");

    PortAudioSession pa(o.verbose);
    if (o.listDevices) {
        listDevices();
        return 0;
    }
    const PaDeviceIndex inDev = findDevice(o.input, o.hostApi, true, Pa_GetDefaultInputDevice());
    PaDeviceIndex outDev = paNoDevice;
    if (!o.farEndFile.empty())
        outDev = findDevice(o.output, o.hostApi, false, Pa_GetDefaultOutputDevice());
    // The device's own rate unless told otherwise: the far-end file is resampled to it.
    const int rate = o.rate != 0 ? o.rate : static_cast<int>(info(outDev != paNoDevice ? outDev : inDev)->defaultSampleRate);
    if (!o.farEndFile.empty()) {
        std::vector<float> mono(farFile.frames());
        for (std::size_t i = 0; i < mono.size(); ++i) {
            float sum = 0.0f;
            for (const auto& c : farFile.channels) sum += c[i];
            mono[i] = sum / static_cast<float>(farFile.channels.size());
        }
        if (farFile.format.sampleRate != rate) {
            dsp::PolyphaseResampler<float> rs;
            rs.prepare(farFile.format.sampleRate, rate);
            farEnd.resize(rs.maxOutput(mono.size()));
            farEnd.resize(rs.process(mono, farEnd));
        } else {
            farEnd = std::move(mono);
        }
    }

    engine::EngineSpec spec;
    spec.hostRate = rate;
    spec.maxHostBlock = o.block;
    spec.safetyBlocks = o.safetyBlocks >= 0 ? o.safetyBlocks : engine::automaticSafetyBlocks(rate, o.block);
    spec.micChannels = 1;
    spec.aec = o.aec;
    engine::RealtimeEngine eng;
    eng.prepare(spec);

    std::unique_ptr<io::StreamingWavWriter> recorder;
    if (!o.record.empty())
        recorder = std::make_unique<io::StreamingWavWriter>(o.record, io::AudioFormat{rate, 1, 0, "PCM_16"});

    LiveState state;
    state.engine = &eng;
    state.recorder = recorder.get();
    state.ref.assign(static_cast<std::size_t>(o.block), 0.0f);
    state.mic.assign(static_cast<std::size_t>(o.block), 0.0f);
    state.out.assign(static_cast<std::size_t>(o.block), 0.0f);
    if (!o.farEndFile.empty()) {
        state.farEnd = &farEnd;
        state.totalFrames = o.seconds > 0.0 ? static_cast<std::size_t>(o.seconds * rate) : farEnd.size();
    } else if (o.seconds > 0.0) {
        state.totalFrames = static_cast<std::size_t>(o.seconds * rate);
    }

    PaStreamParameters inParams{inDev, 1, paFloat32, info(inDev)->defaultLowInputLatency, nullptr};
    PaStreamParameters outParams{};
    if (outDev != paNoDevice) {
        state.outputChannels = std::min(2, info(outDev)->maxOutputChannels);
        outParams = {outDev, state.outputChannels, paFloat32, info(outDev)->defaultLowOutputLatency, nullptr};
    }
    // The host block is fixed so that the engine's latency (one block + resampler delay) holds.
    if (const PaError e = Pa_IsFormatSupported(&inParams, outDev != paNoDevice ? &outParams : nullptr, rate); e != paFormatIsSupported)
        throw DeviceError(std::string("the audio device refuses mono float32 at ") + std::to_string(rate) + " Hz: " + Pa_GetErrorText(e));
    PaStream* raw = nullptr;
    if (const PaError e = Pa_OpenStream(&raw, &inParams, outDev != paNoDevice ? &outParams : nullptr, rate,
                                        static_cast<unsigned long>(o.block), paNoFlag, audioCallback, &state);
        e != paNoError)
        throw DeviceError(std::string("cannot open the audio stream: ") + Pa_GetErrorText(e));
    StreamHandle stream(raw);

    dsp::SpscRing farRing;
    StreamHandle farStream;
    if (!o.farEndDevice.empty()) {
        const PaDeviceIndex farDev = findDevice(o.farEndDevice, o.hostApi, true, paNoDevice);
        farRing.prepare(static_cast<std::size_t>(rate)); // one second of slack
        state.farEndRing = &farRing;
        PaStreamParameters farParams{farDev, 1, paFloat32, info(farDev)->defaultLowInputLatency, nullptr};
        PaStream* f = nullptr;
        if (const PaError e = Pa_OpenStream(&f, &farParams, nullptr, rate, static_cast<unsigned long>(o.block), paNoFlag,
                                            farEndCaptureCallback, &farRing);
            e != paNoError)
            throw DeviceError(std::string("cannot open the far-end capture device: ") + Pa_GetErrorText(e));
        farStream.reset(f);
    }

    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    const engine::EngineStats first = eng.stats();
    std::fprintf(stderr, "quell-live: %s -> %s at %d Hz, block %d; canceller: %s; latency %.1f ms (%d safety block%s)\n",
                 info(inDev)->name, outDev != paNoDevice ? info(outDev)->name : "(no playback)", rate, o.block,
                 first.mode.c_str(), first.latencyMs, first.safetyBlocks, first.safetyBlocks == 1 ? "" : "s");
    if (farStream && Pa_StartStream(farStream.get()) != paNoError)
        throw DeviceError("cannot start the far-end capture stream");
    if (const PaError e = Pa_StartStream(stream.get()); e != paNoError)
        throw DeviceError(std::string("cannot start the audio stream: ") + Pa_GetErrorText(e));

    auto lastStatus = std::chrono::steady_clock::now();
    while (!g_stop.load() && !state.finished.load() && Pa_IsStreamActive(stream.get()) == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (terminal && std::chrono::steady_clock::now() - lastStatus > std::chrono::milliseconds(250)) {
            lastStatus = std::chrono::steady_clock::now();
            const engine::EngineStats st = eng.stats();
            std::fprintf(stderr, "\r\033[KERLE %5.1f dB | mic %6.1f dBFS | far end %6.1f dBFS | late blocks %llu | latency %.1f ms",
                         st.erleDb, st.micLevelDb, st.refLevelDb, static_cast<unsigned long long>(st.lateBlocks), st.latencyMs);
        }
    }
    const bool interrupted = g_stop.load();
    stream.reset(); // stops and closes: no more callbacks
    farStream.reset();
    if (terminal) std::fprintf(stderr, "\r\033[K");
    const engine::EngineStats st = eng.stats();
    std::uint64_t recorded = 0;
    if (recorder) recorded = recorder->finish();
    std::printf("%s after %.2f s: late blocks %llu of %llu, far-end underruns %llu, latency %d samples (%.2f ms)\n",
                interrupted ? "stopped" : "finished", static_cast<double>(state.frames.load()) / rate,
                static_cast<unsigned long long>(st.lateBlocks), static_cast<unsigned long long>(st.callbacks),
                static_cast<unsigned long long>(state.farEndUnderruns.load()), st.latencySamples, st.latencyMs);
    std::printf("processing per block: median %.0f us, p99 %.0f us, p99.9 %.0f us, max %.0f us; canceller: %s\n",
                st.processing.medianUs, st.processing.p99Us, st.processing.p999Us, st.processing.maxUs, st.mode.c_str());
    const engine::BlockTimelineSummary& tl = st.timeline;
    std::printf("block timeline: callback interval max %.0f us, wait for the worker p99.9 %.0f us (max %.0f), queued to "
                "published p99.9 %.0f us (max %.0f); worker at %s priority\n",
                tl.callbackInterval.maxUs, tl.waitBeforePickup.p999Us, tl.waitBeforePickup.maxUs, tl.turnaround.p999Us,
                tl.turnaround.maxUs,
                engine::describe(st.workerPriority).c_str());
    if (tl.lateBlocks > 0 || st.lateBlocks > 0)
        std::printf("late blocks as the worker saw them: %llu (waiting for the worker %llu, processing %llu, hand-back %llu, "
                    "early callback %llu)\n",
                    static_cast<unsigned long long>(tl.lateBlocks), static_cast<unsigned long long>(tl.lateByWait),
                    static_cast<unsigned long long>(tl.lateByProcessing), static_cast<unsigned long long>(tl.lateByHandBack),
                    static_cast<unsigned long long>(tl.lateByEarlyCallback));
    std::printf("clock drift between far end and microphone: %+.1f ppm (compensated)\n", st.driftPpm);
    if (recorder)
        std::printf("recorded %s: %llu frames (%.2f s)%s\n", o.record.c_str(), static_cast<unsigned long long>(recorded),
                    static_cast<double>(recorded) / rate,
                    recorder->droppedFrames() ? " - some frames were dropped (disk too slow)" : "");
    // Stopped by a signal: everything is saved, and the exit code says how the run ended (130 Ctrl-C,
    // 143 SIGTERM), as scripts expect of an interrupted program.
    return interrupted && g_signal.load() != 0 ? 128 + g_signal.load() : 0;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        const std::optional<Options> options = parse(argc, argv);
        return options ? run(*options) : 0;
    } catch (const DeviceError& e) {
        std::fprintf(stderr, "quell-live: %s\n", e.what());
        return 3;
    } catch (...) {
        return io::reportCurrentException("quell-live");
    }
}
