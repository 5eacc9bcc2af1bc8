// SPDX-License-Identifier: GPL-3.0-or-later
// quell-plugin-host-test --vst3 Quell.vst3 --lv2 Quell.lv2
//
// Loads the BUILT plugin binaries through JUCE's plugin hosting (the processor class is not linked in)
// and checks, for each format, at 44.1, 48 and 96 kHz with block sizes 1 to 4096 and varying sizes:
//  - reported latency == the delay of an impulse through the plugin (exact; see latencyTolerance);
//  - the echo of a simulated room is reduced by at least 20 dB (ERLE over the last 0.5 s of 2.5 s);
//  - no NaN, Inf or denormal in any output sample;
//  - bypass plays the input delayed by exactly the reported latency;
//  - each safety block adds a host block to the reported latency and the measured delay (automatic: one
//    below 4 ms blocks), also when changed on a prepared plugin;
//  - the state round-trips every parameter into a fresh instance;
//  - freeze and residual suppression act on the running plugin (48 kHz: frozen from the start the echo
//    stays; 30 dB of suppression takes out more than none);
//  - no allocation on the thread calling processBlock after prepareToPlay (real-time mode), counted by
//    replacing operator new in this program (Tests/support/RealtimeProbe.cpp; the plugin's allocations
//    resolve to it because this program exports its operator new).
//
// ERLE, latency and bypass runs use the host's offline mode (setNonRealtime(true)): the plugin then runs
// its engine without deadlines, so results do not depend on how busy the CI machine is. The allocation
// run uses real-time mode (the engine's worker thread), paced at real time, and changes the filter
// length a quarter of the way in (the canceller is rebuilt off the audio thread and swapped in).
//
// Signals: far end = white noise low-passed at 6 kHz (below the canceller's 8 kHz band; the plugin
// cancels at 16 kHz and passes the resampled band), microphone = the far end through a random echo path
// (1.5 ms flight + 5 ms tail decaying 40 dB, fits the 128-tap = 8 ms filter used here to keep CI fast).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <juce_audio_processors/juce_audio_processors.h>

#include "plugin/PluginHosting.h"
#include "support/RealtimeProbe.h"
#include "support/Signals.h"

using quell::test::findParameter;
using quell::test::pump;
using quell::test::run;

namespace {

int failures = 0;

void check(bool ok, const std::string& what)
{
    std::printf("  [%s] %s\n", ok ? "ok" : "FAIL", what.c_str());
    if (!ok)
        ++failures;
}

// Windowed-sinc low-pass (Blackman), cutoff in Hz.
std::vector<double> lowPassFir(double cutoff, double rate, int taps)
{
    std::vector<double> h(static_cast<std::size_t>(taps));
    const double fc = cutoff / rate;
    const int mid = taps / 2;
    double sum = 0.0;
    for (int i = 0; i < taps; ++i) {
        const int k = i - mid;
        const double sinc = k == 0 ? 2.0 * fc : std::sin(2.0 * M_PI * fc * k) / (M_PI * k);
        const double w = 0.42 - 0.5 * std::cos(2.0 * M_PI * i / (taps - 1)) + 0.08 * std::cos(4.0 * M_PI * i / (taps - 1));
        h[static_cast<std::size_t>(i)] = sinc * w;
        sum += h[static_cast<std::size_t>(i)];
    }
    for (double& v : h)
        v /= sum;
    return h;
}

struct Scene {
    std::vector<float> mic, farEnd;
};

// A room: coloured noise far end and its echo at the microphone.
Scene makeScene(double rate, std::size_t n, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> gauss(0.0, 1.0);
    const std::vector<double> white = quell::test::whiteNoise(n, seed + 1, 0.25);
    const std::vector<double> far = quell::test::convolve(white, lowPassFir(6000.0, rate, 255));
    const auto flight = static_cast<std::size_t>(0.0015 * rate);
    const auto tail = static_cast<std::size_t>(0.005 * rate);
    std::vector<double> path(flight + tail, 0.0);
    path[flight] = 0.6;
    for (std::size_t i = 1; i < tail; ++i)
        path[flight + i] = 0.3 * gauss(rng) * std::pow(10.0, -2.0 * static_cast<double>(i) / static_cast<double>(tail));
    const std::vector<double> echo = quell::test::convolve(far, path);
    Scene s;
    s.mic.resize(n);
    s.farEnd.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        s.mic[i] = static_cast<float>(echo[i] + 1e-5 * gauss(rng));   // a -100 dB noise floor
        s.farEnd[i] = static_cast<float>(far[i]);
    }
    return s;
}

struct Loaded {
    std::unique_ptr<juce::AudioPluginInstance> plugin;
    std::string format;
};

void setParameter(juce::AudioPluginInstance& plugin, const juce::String& name, float normalised)
{
    if (auto* p = findParameter(plugin, name))
        p->setValueNotifyingHost(normalised);
    else
        check(false, "parameter '" + name.toStdString() + "' exists");
}

juce::AudioProcessorParameter* bypassParameter(juce::AudioPluginInstance& plugin)
{
    if (auto* p = plugin.getBypassParameter())
        return p;
    return findParameter(plugin, "Bypass");
}

// Filter length choice index 0 = 128 taps (7 choices, the last Automatic): fast enough for CI on a CPU.
void useShortFilter(juce::AudioPluginInstance& plugin) { setParameter(plugin, "Filter length", 0.0f); }

double energy(const std::vector<float>& x, std::size_t from, std::size_t to)
{
    double e = 0.0;
    for (std::size_t i = from; i < to; ++i)
        e += static_cast<double>(x[i]) * x[i];
    return e;
}

// Impulse on the microphone, far end silent: where the output's peak lies after it (the latency).
long impulseDelay(juce::AudioPluginInstance& plugin, int latency, std::function<int()> nextBlock, juce::AudioBuffer<float>& buffer,
                  bool* finite = nullptr, bool* noDenormals = nullptr)
{
    const std::size_t at = 3000;
    std::vector<float> mic(at + static_cast<std::size_t>(latency) + 3000, 0.0f), far(mic.size(), 0.0f);
    mic[at] = 0.5f;
    const std::vector<float> out = run(plugin, mic, far, nextBlock, buffer, finite, noDenormals);
    std::size_t peak = 0;
    for (std::size_t i = 0; i < out.size(); ++i)
        if (std::abs(out[i]) > std::abs(out[peak]))
            peak = i;
    return static_cast<long>(peak) - static_cast<long>(at);
}

// One configuration: prepare, measure the latency, cancel a room echo, check bypass.
void testConfiguration(juce::AudioPluginInstance& plugin, double rate, int maxBlock, const std::string& blockName,
                       std::function<int()> nextBlock)
{
    const std::string tag = std::to_string(static_cast<int>(rate)) + " Hz, blocks " + blockName;
    plugin.releaseResources();
    plugin.setNonRealtime(true);
    plugin.prepareToPlay(rate, maxBlock);
    juce::AudioBuffer<float> buffer;
    // A first block delivers pending parameter changes and lets the format report the latency.
    {
        std::vector<float> zeros(static_cast<std::size_t>(std::min(maxBlock, 64)), 0.0f);
        run(plugin, zeros, zeros, [&] { return maxBlock; }, buffer);
    }
    pump(60);
    const int latency = plugin.getLatencySamples();

    bool finite = true, noDenormals = true;
    const long measured = impulseDelay(plugin, latency, nextBlock, buffer, &finite, &noDenormals);
    check(measured == latency, tag + ": reported latency " + std::to_string(latency) + " == measured impulse delay "
                                   + std::to_string(measured));

    // Room echo: 2.5 s, ERLE over the last 0.5 s (output aligned by the latency).
    const auto n = static_cast<std::size_t>(2.5 * rate);
    const Scene scene = makeScene(rate, n, static_cast<std::uint32_t>(rate) + static_cast<std::uint32_t>(maxBlock));
    const std::vector<float> out = run(plugin, scene.mic, scene.farEnd, nextBlock, buffer, &finite, &noDenormals);
    const std::size_t from = n - static_cast<std::size_t>(0.5 * rate);
    const double erle = 10.0 * std::log10(energy(scene.mic, from - static_cast<std::size_t>(latency), n - static_cast<std::size_t>(latency))
                                          / std::max(energy(out, from, n), 1e-30));
    char text[160];
    std::snprintf(text, sizeof text, "%s: ERLE %.1f dB >= 20 dB", tag.c_str(), erle);
    check(erle >= 20.0, text);

    // Bypass: after the 20 ms fade, the output is the input delayed by the latency, sample for sample.
    auto* bypass = bypassParameter(plugin);
    check(bypass != nullptr, tag + ": bypass parameter exposed");
    if (bypass != nullptr) {
        bypass->setValueNotifyingHost(1.0f);
        const Scene more = makeScene(rate, static_cast<std::size_t>(0.3 * rate), 99);
        const std::vector<float> byp = run(plugin, more.mic, more.farEnd, nextBlock, buffer, &finite, &noDenormals);
        const std::size_t start = static_cast<std::size_t>(0.05 * rate) + static_cast<std::size_t>(latency);
        double maxError = 0.0;
        for (std::size_t i = start; i < byp.size(); ++i)
            maxError = std::max(maxError, static_cast<double>(std::abs(byp[i] - more.mic[i - static_cast<std::size_t>(latency)])));
        std::snprintf(text, sizeof text, "%s: bypass = input delayed by %d samples (max error %.3g)", tag.c_str(), latency, maxError);
        check(maxError == 0.0, text);
        bypass->setValueNotifyingHost(0.0f);
        std::vector<float> zeros(static_cast<std::size_t>(maxBlock), 0.0f);
        run(plugin, zeros, zeros, [&] { return maxBlock; }, buffer);
    }
    check(finite, tag + ": no NaN or Inf in the output (and equal channels for equal inputs)");
    check(noDenormals, tag + ": no denormals in the output");
}

// Freeze and suppression act on the running plugin: frozen from the start, the output filter never
// learns the room (the echo stays); adapting with no suppression still cancels; full suppression on top
// takes out more.
void testControls(juce::AudioPluginInstance& plugin, const std::string& format)
{
    const double rate = 48000.0;
    const int block = 256;
    const auto n = static_cast<std::size_t>(2.5 * rate);
    const Scene scene = makeScene(rate, n, 77);
    const std::size_t from = n - static_cast<std::size_t>(0.5 * rate);
    juce::AudioBuffer<float> buffer;
    const auto erleWith = [&](float adaptation, float suppression) {
        setParameter(plugin, "Adaptation", adaptation);
        setParameter(plugin, "Residual suppression", suppression);
        plugin.releaseResources();
        plugin.setNonRealtime(true);
        plugin.prepareToPlay(rate, block);
        pump(60);
        const auto latency = static_cast<std::size_t>(plugin.getLatencySamples());
        const std::vector<float> out = run(plugin, scene.mic, scene.farEnd, [block] { return block; }, buffer);
        return 10.0 * std::log10(energy(scene.mic, from - latency, n - latency) / std::max(energy(out, from, n), 1e-30));
    };
    const double frozen = erleWith(0.0f, 0.0f);
    const double adapting = erleWith(1.0f, 0.0f);
    const double suppressed = erleWith(1.0f, 1.0f);
    char text[200];
    std::snprintf(text, sizeof text, "%s: frozen from the start the echo stays (ERLE %.1f dB < 3 dB)", format.c_str(), frozen);
    check(frozen < 3.0, text);
    std::snprintf(text, sizeof text, "%s: adapting, no suppression: ERLE %.1f dB >= 20 dB", format.c_str(), adapting);
    check(adapting >= 20.0, text);
    std::snprintf(text, sizeof text, "%s: with 30 dB of suppression ERLE %.1f dB > %.1f dB", format.c_str(), suppressed, adapting);
    check(suppressed > adapting, text);
    setParameter(plugin, "Residual suppression", 0.4f);   // the default, 12 dB of 30
}

// Safety blocks: each adds a host block to the reported latency, which the output's delay follows,
// also when changed on a prepared plugin.
void testSafetyBlocks(juce::AudioPluginInstance& plugin, const std::string& format)
{
    const double rate = 48000.0;
    const int block = 256;   // 5.3 ms: no safety block when automatic
    juce::AudioBuffer<float> buffer;
    std::vector<float> zeros(static_cast<std::size_t>(block), 0.0f);
    const auto latencyAfterABlock = [&] {
        run(plugin, zeros, zeros, [&] { return block; }, buffer);
        pump(60);
        return plugin.getLatencySamples();
    };
    setParameter(plugin, "Safety blocks", 0.0f);   // Automatic
    plugin.releaseResources();
    plugin.setNonRealtime(true);
    plugin.prepareToPlay(rate, block);
    const int automatic = latencyAfterABlock();
    setParameter(plugin, "Safety blocks", 3.0f / 5.0f);   // "2" (choices: Automatic, 0..4)
    const int two = latencyAfterABlock();
    check(two == automatic + 2 * block, format + ": 2 safety blocks add 2 host blocks to the latency ("
                                            + std::to_string(automatic) + " -> " + std::to_string(two) + ")");
    const long measured = impulseDelay(plugin, two, [&] { return block; }, buffer);
    check(measured == two, format + ": with 2 safety blocks the impulse delay " + std::to_string(measured)
                               + " == the reported latency " + std::to_string(two));
    setParameter(plugin, "Safety blocks", 0.0f);
    check(latencyAfterABlock() == automatic, format + ": back to automatic, back to the latency before");
    // At 128 samples (2.7 ms) the automatic choice is one safety block.
    plugin.releaseResources();
    plugin.prepareToPlay(rate, 128);
    zeros.assign(128, 0.0f);
    run(plugin, zeros, zeros, [] { return 128; }, buffer);
    pump(60);
    const int small = plugin.getLatencySamples();
    setParameter(plugin, "Safety blocks", 1.0f / 5.0f);   // "0"
    run(plugin, zeros, zeros, [] { return 128; }, buffer);
    pump(60);
    check(small == plugin.getLatencySamples() + 128, format + ": automatic at 128-sample blocks is one safety block ("
                                                          + std::to_string(small) + " vs " + std::to_string(plugin.getLatencySamples()) + " with none)");
    setParameter(plugin, "Safety blocks", 0.0f);
}

void testFormat(Loaded& loaded, juce::AudioPluginFormatManager& manager, const juce::PluginDescription& description)
{
    auto& plugin = *loaded.plugin;
    std::printf("%s: %s, %d in / %d out channels, %d input buses\n", loaded.format.c_str(), plugin.getName().toRawUTF8(),
                plugin.getTotalNumInputChannels(), plugin.getTotalNumOutputChannels(), plugin.getBusCount(true));
    check(plugin.getTotalNumInputChannels() == 2, loaded.format + ": microphone + sidechain inputs (mono, mono)");
    check(plugin.getTotalNumOutputChannels() == 1, loaded.format + ": one (mono) output");

    useShortFilter(plugin);
    testControls(plugin, loaded.format);
    testSafetyBlocks(plugin, loaded.format);
    std::mt19937 rng(5);
    for (double rate : {44100.0, 48000.0, 96000.0}) {
        for (int block : {1, 32, 441, 4096})
            testConfiguration(plugin, rate, block, std::to_string(block), [block] { return block; });
        std::uniform_int_distribution<int> sizes(1, 1024);
        testConfiguration(plugin, rate, 1024, "varying 1..1024", [&] { return sizes(rng); });
    }

    // Stereo microphone and stereo far end (VST3: an LV2's ports are fixed by its manifest).
    if (loaded.format == "VST3") {
        plugin.releaseResources();
        juce::AudioProcessor::BusesLayout stereo;
        stereo.inputBuses = {juce::AudioChannelSet::stereo(), juce::AudioChannelSet::stereo()};
        stereo.outputBuses = {juce::AudioChannelSet::stereo()};
        const bool accepted = plugin.setBusesLayout(stereo);
        check(accepted, "VST3: accepts a stereo microphone with a stereo sidechain");
        if (accepted)
            testConfiguration(plugin, 48000.0, 512, "512, stereo mic + stereo far end", [] { return 512; });
        juce::AudioProcessor::BusesLayout surround = stereo;
        surround.inputBuses[1] = juce::AudioChannelSet::create5point1();
        // JUCE's VST3 host may report success for a layout the plugin refused; what counts is the
        // layout in effect afterwards.
        const bool tookSurround = plugin.setBusesLayout(surround) && plugin.getChannelCountOfBus(true, 1) == 6;
        check(!tookSurround, "VST3: does not take a 5.1 sidechain (sidechain now has "
                                 + std::to_string(plugin.getChannelCountOfBus(true, 1)) + " channels)");
        plugin.releaseResources();
        juce::AudioProcessor::BusesLayout mono;
        mono.inputBuses = {juce::AudioChannelSet::mono(), juce::AudioChannelSet::mono()};
        mono.outputBuses = {juce::AudioChannelSet::mono()};
        check(plugin.setBusesLayout(mono), "VST3: back to mono");
    }

    // Allocation count in real-time mode: prepare, then every processBlock with the probe armed.
    {
        plugin.releaseResources();
        plugin.setNonRealtime(false);
        const double rate = 48000.0;
        const int block = 512;
        quell::test::resetRealtimeViolations();
        {
            quell::test::RealtimeProbe probe;
            plugin.prepareToPlay(rate, block);
        }
        const auto prepareAllocations = quell::test::realtimeViolations().allocations;
        check(prepareAllocations > 0, loaded.format + ": the allocation counter sees the plugin's allocations (prepareToPlay made "
                                          + std::to_string(prepareAllocations) + ")");
        const Scene scene = makeScene(rate, static_cast<std::size_t>(2.0 * rate), 11);
        juce::AudioBuffer<float> buffer(2, block);
        juce::MidiBuffer midi;
        quell::test::resetRealtimeViolations();
        std::vector<float> out(scene.mic.size(), 0.0f);
        auto next = std::chrono::steady_clock::now();
        const auto period = std::chrono::microseconds(static_cast<long>(1e6 * block / rate));
        bool finite = true;
        for (std::size_t pos = 0; pos + static_cast<std::size_t>(block) <= scene.mic.size(); pos += static_cast<std::size_t>(block)) {
            buffer.copyFrom(0, 0, scene.mic.data() + pos, block);
            buffer.copyFrom(1, 0, scene.farEnd.data() + pos, block);
            if (pos == scene.mic.size() / 4 / static_cast<std::size_t>(block) * static_cast<std::size_t>(block))
                setParameter(plugin, "Filter length", 0.2f);   // 256 taps: rebuilt off the audio thread, swapped in
            {
                quell::test::RealtimeProbe probe;
                plugin.processBlock(buffer, midi);
            }
            for (int i = 0; i < block; ++i) {
                out[pos + static_cast<std::size_t>(i)] = buffer.getSample(0, i);
                finite = finite && std::isfinite(buffer.getSample(0, i));
            }
            next += period;
            std::this_thread::sleep_until(next);   // paced like an audio device
        }
        const auto v = quell::test::realtimeViolations();
        const auto blocks = static_cast<std::uint64_t>(scene.mic.size() / static_cast<std::size_t>(block));
        if (loaded.format == "VST3") {
            // JUCE 7.0.5's VST3 client wrapper (compiled into every JUCE VST3, outside the processor)
            // copies each input bus's channel mapping by value in ClientBufferMapperData::
            // setUpInputChannels (juce_VST3Common.h: `const auto mapping = map[busIndex];`), which
            // allocates once per active input bus per block. The processor itself is the same code as in
            // the LV2, which must show zero. Anything beyond the wrapper's count fails.
            const auto wrapper = blocks * static_cast<std::uint64_t>(plugin.getBusCount(true));
            check(v.allocations == wrapper,
                  "VST3: real-time processBlock made " + std::to_string(v.allocations) + " allocations in " + std::to_string(blocks)
                      + " blocks, all accounted for by JUCE 7.0.5's VST3 wrapper (" + std::to_string(wrapper)
                      + " = one per input bus per block); the processor adds none");
        } else {
            check(v.allocations == 0, loaded.format + ": real-time processBlock made " + std::to_string(v.allocations) + " allocations in "
                                          + std::to_string(blocks) + " blocks (mutex locks seen, informational: " + std::to_string(v.locks) + ")");
        }
        check(finite, loaded.format + ": real-time mode output finite");
        const int latency = plugin.getLatencySamples();
        const std::size_t n = out.size() - out.size() % static_cast<std::size_t>(block);
        const std::size_t from = n - static_cast<std::size_t>(0.5 * rate);
        const double erle = 10.0 * std::log10(energy(scene.mic, from - static_cast<std::size_t>(latency), n - static_cast<std::size_t>(latency))
                                              / std::max(energy(out, from, n), 1e-30));
        std::printf("  [info] %s: real-time mode (worker thread, paced), ERLE over the last 0.5 s: %.1f dB\n", loaded.format.c_str(), erle);
    }

    // State: set every parameter to something other than its default, let the processor see it, save,
    // restore into a fresh instance, compare.
    {
        plugin.setNonRealtime(true);
        plugin.prepareToPlay(48000.0, 256);
        const std::map<juce::String, float> wanted = {{"Filter length", 2.0f / 6.0f}, {"Forgetting factor", 0.25f}, {"Adaptation", 0.0f},
                                                      {"Residual suppression", 0.7f}, {"Comfort noise", 0.0f}, {"Backend", 1.0f},
                                                      {"Automatic forgetting", 0.0f}};
        for (const auto& [name, value] : wanted)
            setParameter(plugin, name, value);
        // Lambda on its 1e-5 grid (a value between grid points is stored rounded, which is not a
        // round-trip failure): set through the parameter's own text conversion.
        if (auto* lambda = findParameter(plugin, "Forgetting factor"))
            lambda->setValueNotifyingHost(lambda->getValueForText("0.9995"));
        juce::AudioBuffer<float> buffer;
        std::vector<float> zeros(256, 0.0f);
        run(plugin, zeros, zeros, [] { return 256; }, buffer);
        pump(60);
        juce::MemoryBlock state;
        plugin.getStateInformation(state);
        juce::String error;
        auto fresh = manager.createPluginInstance(description, 48000.0, 256, error);
        check(fresh != nullptr, loaded.format + ": second instance for the state round trip " + error.toStdString());
        if (fresh) {
            fresh->setStateInformation(state.getData(), static_cast<int>(state.getSize()));
            // The restored values reach the host's side of the parameters through the plugin's next
            // process call (LV2 sends them as patch:Set events), as in a session being reopened.
            fresh->setNonRealtime(true);
            fresh->prepareToPlay(48000.0, 256);
            run(*fresh, zeros, zeros, [] { return 256; }, buffer);
            pump(60);
            for (const auto& [name, value] : wanted) {
                auto* a = findParameter(plugin, name);
                auto* b = findParameter(*fresh, name);
                const bool same = a && b && a->getCurrentValueAsText() == b->getCurrentValueAsText()
                                  && std::abs(a->getValue() - b->getValue()) < 1e-3f
                                  && std::abs(b->getValue() - b->getDefaultValue()) > 1e-3f;
                char text[200];
                std::snprintf(text, sizeof text, "%s: state round trip of '%s' (%s -> %s, not the default)", loaded.format.c_str(),
                              name.toRawUTF8(), a ? a->getCurrentValueAsText().toRawUTF8() : "?",
                              b ? b->getCurrentValueAsText().toRawUTF8() : "?");
                check(same, text);
            }
            fresh->releaseResources();
        }
        plugin.releaseResources();
    }
}

} // namespace

int main(int argc, char** argv)
{
    juce::ScopedJuceInitialiser_GUI juce;
    juce::String vst3Path, lv2Path;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (juce::String(argv[i]) == "--vst3")
            vst3Path = argv[i + 1];
        else if (juce::String(argv[i]) == "--lv2")
            lv2Path = argv[i + 1];
    }
    if (vst3Path.isEmpty() || lv2Path.isEmpty()) {
        std::fprintf(stderr, "usage: quell-plugin-host-test --vst3 Quell.vst3 --lv2 Quell.lv2\n");
        return 2;
    }

    juce::AudioPluginFormatManager manager;
    auto* vst3 = new juce::VST3PluginFormat();
    auto* lv2 = new juce::LV2PluginFormat();
    manager.addFormat(vst3);
    manager.addFormat(lv2);

    std::vector<std::pair<std::string, juce::PluginDescription>> found;
    {
        juce::OwnedArray<juce::PluginDescription> types;
        vst3->findAllTypesForFile(types, vst3Path);
        check(types.size() == 1, "VST3 bundle " + vst3Path.toStdString() + " holds one plugin");
        if (!types.isEmpty())
            found.emplace_back("VST3", *types[0]);
    }
    {
        // JUCE's LV2 host ignores LV2_PATH: search the bundle's folder explicitly.
        const juce::File bundle(lv2Path);
        const juce::StringArray uris = lv2->searchPathsForPlugins(juce::FileSearchPath(bundle.getParentDirectory().getFullPathName()), true, false);
        juce::OwnedArray<juce::PluginDescription> types;
        for (const auto& uri : uris)
            if (uri.contains("quell"))
                lv2->findAllTypesForFile(types, uri);
        check(types.size() == 1, "LV2 bundle " + lv2Path.toStdString() + " holds the Quell plugin (" + uris.joinIntoString(", ").toStdString() + ")");
        if (!types.isEmpty())
            found.emplace_back("LV2", *types[0]);
    }

    for (auto& [format, description] : found) {
        juce::String error;
        Loaded loaded{manager.createPluginInstance(description, 48000.0, 512, error), format};
        check(loaded.plugin != nullptr, format + ": instance created " + error.toStdString());
        if (!loaded.plugin)
            continue;
        testFormat(loaded, manager, description);
        loaded.plugin.reset();
        pump(50);
    }
    std::printf("%s: %d failure(s)\n", failures == 0 ? "PASSED" : "FAILED", failures);
    return failures == 0 ? 0 : 1;
}
