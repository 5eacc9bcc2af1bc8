// SPDX-License-Identifier: GPL-3.0-or-later
// quell-plugin-corpus-test --vst3 Quell.vst3 --scenario DIR [--rate HZ] [--block N] [--min-erle DB] [--min-near-snr DB]
//
// The built VST3, loaded through JUCE's plugin hosting on this machine (no GPU in CI), on a quell-corpus
// scenario brought to the host's rate, with every parameter at its default: issue 14's "steady ERLE at
// 48 kHz, in real-time and in offline mode". Offline, the host renders as fast as the plugin goes (the
// plugin then picks its filter with no deadline); in real time, blocks come at the pace of the audio
// clock (the plugin's worker has its deadlines, and its real-time CPU filter).
//
// A stereo scenario (two far-end channels) goes to the sidechain as stereo, with a mono microphone.
//
// The figures are quell-eval's (Tests/eval/EchoMetrics): ERLE is the echo over output - near - noise,
// with the near end and the noise passed through the plugin's own front end (resamplers, high-pass:
// the plugin frozen from the start with no suppression and no comfort noise, which is the front end
// alone), all aligned by the reported latency. Exit 0 when both modes reach --min-erle, and --min-near-snr
// (the near-end SNR after the fit, for a scenario with double talk) where given.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <juce_audio_processors/juce_audio_processors.h>

#include "dsp/PolyphaseResampler.h"
#include "engine/ThreadPriority.h"
#include "eval/CorpusScenario.h"
#include "eval/EchoMetrics.h"
#include "io/CommandLine.h"
#include "plugin/PluginHosting.h"

namespace {

// x at `from` Hz to `to` Hz, the resampler's group delay removed (the same for every component), cut to
// the input's duration.
std::vector<float> resample(const std::vector<float>& x, int from, int to)
{
    std::vector<float> y = quell::dsp::resampleWhole<float>(x, from, to);
    y.resize(static_cast<std::size_t>(std::llround(double(x.size()) * to / from)), 0.0f);
    return y;
}

void setParameter(juce::AudioPluginInstance& plugin, const char* name, float normalised)
{
    auto* p = quell::test::findParameter(plugin, name);
    if (p == nullptr)
        throw std::runtime_error(std::string("the plugin has no parameter '") + name + "'");
    p->setValueNotifyingHost(normalised);
}

// SCHED_FIFO priority of JACK's and PipeWire's audio threads (the engine's worker asks for 60).
constexpr int hostAudioPriority = 70;

struct Run {
    std::vector<float> out;   // aligned: sample i answers input sample i
    int latency = 0;
};

// mic and far end through the plugin from a fresh prepare, in `block`-sample blocks; real time paces the
// blocks by the audio clock.
Run render(juce::AudioPluginInstance& plugin, const std::vector<float>& mic, const std::vector<std::vector<float>>& farEnd,
           double rate, int block, bool realTime)
{
    plugin.releaseResources();
    plugin.setNonRealtime(!realTime);
    plugin.prepareToPlay(rate, block);
    quell::test::pump(100);
    juce::AudioBuffer<float> buffer;
    auto start = std::chrono::steady_clock::now();
    std::size_t done = 0;
    const auto paced = [&] {
        if (realTime)
            std::this_thread::sleep_until(start + std::chrono::duration<double>(double(done) / rate));
        done += static_cast<std::size_t>(block);
        return block;
    };
    // The plugin's latency is final after its first block; pad the inputs by it and take it off the output.
    quell::test::run(plugin, std::vector<float>(static_cast<std::size_t>(block), 0.0f),
                     std::vector<float>(static_cast<std::size_t>(block), 0.0f), paced, buffer);
    quell::test::pump(50);
    // The clock starts again after the pause: an audio device resumes at its own pace, where a clock
    // left running would now call back several blocks at once to catch up (each of them late).
    start = std::chrono::steady_clock::now();
    done = 0;
    Run r;
    r.latency = plugin.getLatencySamples();
    std::vector<float> m(mic);
    m.resize(mic.size() + static_cast<std::size_t>(r.latency), 0.0f);
    std::vector<std::vector<float>> x(farEnd);
    for (auto& channel : x)
        channel.resize(m.size(), 0.0f);
    const std::vector<float>* right = x.size() > 1 ? &x[1] : nullptr;
    std::vector<float> out;
    if (realTime) {
        // A host's audio thread runs at real-time priority, above the plugin's worker (60): so does
        // this one where the system allows it, so that the blocks come when the clock says even on a
        // busy machine, and a late block is the plugin's, not the test's.
        std::thread audio([&] {
            quell::engine::raiseCurrentThreadPriority(hostAudioPriority);
            out = quell::test::run(plugin, m, x[0], paced, buffer, nullptr, nullptr, right);
        });
        audio.join();
    } else {
        out = quell::test::run(plugin, m, x[0], paced, buffer, nullptr, nullptr, right);
    }
    r.out.assign(out.begin() + r.latency, out.end());
    return r;
}

} // namespace

int main(int argc, char** argv)
{
    juce::ScopedJuceInitialiser_GUI juce;
    std::string vst3Path, scenarioDir;
    double rate = 48000.0, minErle = 30.0;
    std::optional<double> minNearSnr;
    int block = 512;
    bool usable = argc % 2 == 1;   // the program and pairs of option and value
    try {
        for (int i = 1; i + 1 < argc && usable; i += 2) {
            const std::string key = argv[i], value = argv[i + 1];
            if (key == "--vst3")
                vst3Path = value;
            else if (key == "--scenario")
                scenarioDir = value;
            else if (key == "--rate")
                rate = quell::io::parseInt("--rate", value, 8000, 192000);
            else if (key == "--block")
                block = quell::io::parseInt("--block", value, 1, 8192);
            else if (key == "--min-erle")
                minErle = quell::io::parseDouble("--min-erle", value, -100.0, 200.0);
            else if (key == "--min-near-snr")
                minNearSnr = quell::io::parseDouble("--min-near-snr", value, -100.0, 200.0);
            else
                usable = false;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "quell-plugin-corpus-test: %s\n", e.what());
        return 2;
    }
    if (!usable || vst3Path.empty() || scenarioDir.empty()) {
        std::fprintf(stderr, "usage: quell-plugin-corpus-test --vst3 Quell.vst3 --scenario DIR [--rate HZ] [--block N] [--min-erle DB] "
                             "[--min-near-snr DB]\n");
        return 2;
    }
    try {
        quell::eval::CorpusScenario s = quell::eval::loadScenario(scenarioDir);
        const int hostRate = static_cast<int>(rate);
        if (s.ref.size() > 2)
            throw std::runtime_error("the plugin's sidechain takes one or two far-end channels");
        for (auto* component : {&s.mic, &s.near, &s.echo, &s.noise})
            *component = resample(*component, s.sampleRate, hostRate);
        for (auto& channel : s.ref)
            channel = resample(channel, s.sampleRate, hostRate);
        s.sampleRate = hostRate;

        juce::AudioPluginFormatManager manager;
        auto* vst3 = new juce::VST3PluginFormat();
        manager.addFormat(vst3);
        juce::OwnedArray<juce::PluginDescription> types;
        vst3->findAllTypesForFile(types, vst3Path);
        if (types.isEmpty())
            throw std::runtime_error("no plugin in " + vst3Path);
        juce::String error;
        auto plugin = manager.createPluginInstance(*types[0], rate, block, error);
        if (!plugin)
            throw std::runtime_error("cannot instantiate the VST3: " + error.toStdString());
        if (s.ref.size() == 2) {
            juce::AudioProcessor::BusesLayout layout;
            layout.inputBuses = {juce::AudioChannelSet::mono(), juce::AudioChannelSet::stereo()};
            layout.outputBuses = {juce::AudioChannelSet::mono()};
            if (!plugin->setBusesLayout(layout))
                throw std::runtime_error("the VST3 refuses a stereo sidechain");
        }

        // The front end alone: frozen from the start, no suppression, no comfort noise.
        setParameter(*plugin, "Adaptation", 0.0f);
        setParameter(*plugin, "Residual suppression", 0.0f);
        setParameter(*plugin, "Comfort noise", 0.0f);
        const auto frontEnd = [&](const std::vector<float>& x) { return render(*plugin, x, s.ref, rate, block, false).out; };
        const std::vector<float> nearFe = frontEnd(s.near), echoFe = frontEnd(s.echo), noiseFe = frontEnd(s.noise);

        // Every parameter back to its default.
        for (auto* p : plugin->getParameters())
            p->setValueNotifyingHost(p->getDefaultValue());
        int failures = 0;
        std::printf("%s at %d Hz, %d-sample blocks, %s far end, every parameter at its default:\n", s.name.c_str(), hostRate, block,
                    s.ref.size() == 2 ? "a stereo" : "a mono");
        for (const bool realTime : {false, true}) {
            const Run r = render(*plugin, s.mic, s.ref, rate, block, realTime);
            const quell::eval::EchoFigures f = quell::eval::measure(s, r.out, nearFe, echoFe, noiseFe);
            std::printf("  %-9s ERLE %s dB (mic/out %s), time to 20 dB %s s, near SNR after the fit %s dB, loudest frame %s dB, latency %d\n",
                        realTime ? "real time" : "offline", quell::eval::formatFigure(f.steadyErleDb).c_str(),
                        quell::eval::formatFigure(f.steadyMicOverOutDb).c_str(), quell::eval::formatFigure(f.timeTo20dB, 2).c_str(),
                        quell::eval::formatFigure(f.nearSnrFitDb).c_str(), quell::eval::formatFigure(f.loudestFrameDb).c_str(), r.latency);
            const bool ok = f.steadyErleDb && *f.steadyErleDb >= minErle;
            std::printf("  [%s] %s: steady ERLE >= %.1f dB\n", ok ? "ok" : "FAIL", realTime ? "real time" : "offline", minErle);
            failures += ok ? 0 : 1;
            if (minNearSnr) {
                const bool kept = f.nearSnrFitDb && *f.nearSnrFitDb >= *minNearSnr;
                std::printf("  [%s] %s: near-end SNR after the fit >= %.1f dB\n", kept ? "ok" : "FAIL", realTime ? "real time" : "offline",
                            *minNearSnr);
                failures += kept ? 0 : 1;
            }
        }
        plugin.reset();
        quell::test::pump(50);
        std::printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
        return failures == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "quell-plugin-corpus-test: %s\n", e.what());
        return 1;
    }
}
