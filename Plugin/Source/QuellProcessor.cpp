// SPDX-License-Identifier: GPL-3.0-or-later
#include "QuellProcessor.h"

#include <algorithm>
#include <cmath>

#include "QuellEditor.h"
#include "SettingsThread.h"

namespace quell::plugin {
namespace {

constexpr double bypassFadeSeconds = 0.02;   // bypass cross-fade: no click, short enough to feel instant
constexpr juce::uint32 settingsDebounceMs = 250;

bool monoOrStereo(const juce::AudioChannelSet& set)
{
    return set == juce::AudioChannelSet::mono() || set == juce::AudioChannelSet::stereo();
}

} // namespace

juce::AudioProcessor::BusesProperties QuellProcessor::defaultBuses()
{
    using juce::AudioChannelSet;
    return BusesProperties()
        .withInput("Input", AudioChannelSet::mono(), true)
        .withOutput("Output", AudioChannelSet::mono(), true)
        .withInput("Sidechain", AudioChannelSet::mono(), true);
}

QuellProcessor::QuellProcessor()
    : AudioProcessor(defaultBuses()),
      state_(*this, nullptr, "QuellParameters", createParameterLayout()),
      reader_(state_)
{
    // Nothing here touches the GPU: the LV2 build step loads the plugin to write its manifest, on
    // machines with no GPU. The engine (and any GPU) is set up in prepareToPlay().
    settingsThread_ = std::make_unique<SettingsThread>(*this);
    settingsThread_->startThread();
}

QuellProcessor::~QuellProcessor()
{
    settingsThread_->stopThread(2000);
    const std::lock_guard<std::mutex> lock(controlMutex_);
    engineReady_.store(false);
    engine_.release();
}

bool QuellProcessor::isBusesLayoutSupported(const BusesLayout& layouts) const
{
    // Main: mono or stereo microphone, the same on the way out (each channel gets its own canceller).
    const auto in = layouts.getMainInputChannelSet();
    if (!monoOrStereo(in) || layouts.getMainOutputChannelSet() != in)
        return false;
    // Sidechain: mono or stereo far end (a stereo one is cancelled as two channels), or switched off
    // (nothing to cancel: the microphone passes through, delayed by the latency).
    if (layouts.inputBuses.size() > 1) {
        const auto side = layouts.getChannelSet(true, 1);
        if (!side.isDisabled() && !monoOrStereo(side))
            return false;
    }
    return layouts.inputBuses.size() <= 2 && layouts.outputBuses.size() == 1;
}

juce::AudioProcessorParameter* QuellProcessor::getBypassParameter() const
{
    return state_.getParameter(ParamId::bypass);
}

double QuellProcessor::getTailLengthSeconds() const
{
    return sampleRate_ > 0.0 ? getLatencySamples() / sampleRate_ : 0.0;
}

void QuellProcessor::prepareToPlay(double sampleRate, int maximumExpectedSamplesPerBlock)
{
    prepareEngine(sampleRate, std::max(maximumExpectedSamplesPerBlock, 1), isNonRealtime());
}

void QuellProcessor::releaseResources()
{
    const std::lock_guard<std::mutex> lock(controlMutex_);
    engineReady_.store(false);
    engine_.release();
}

void QuellProcessor::prepareEngine(double sampleRate, int maxBlock, bool offline)
{
    const std::lock_guard<std::mutex> lock(controlMutex_);
    engineReady_.store(false);
    sampleRate_ = sampleRate;
    maxBlock_ = std::min(maxBlock, 8192);   // larger host blocks are processed in pieces of this size
    micChannels_ = std::clamp(getMainBusNumInputChannels(), 1, 2);
    farEndChannels_ = getBusCount(true) > 1 ? getChannelCountOfBus(true, 1) : 0;

    const CancellerChoice choice = reader_.choice();
    engine::EngineSpec spec;
    spec.hostRate = static_cast<int>(std::lround(sampleRate));
    spec.maxHostBlock = maxBlock_;
    spec.safetyBlocks = wantedSafetyBlocksLocked();
    spec.micChannels = micChannels_;
    spec.farEndChannels = farEndChannels_ == 2 ? 2 : 1;
    spec.aec = toSettings(choice, offline);
    spec.offline = offline;
    backendNote_.clear();
    bool ready = true;
    try {
        engine_.prepare(spec);
        backendNote_ = backendNote(choice, engine_.fallbackReason());
    } catch (const std::exception& e) {
        backendNote_ = std::string("engine failed: ") + e.what();
        ready = false;
    }
    applied_ = pending_ = choice;
    appliedControls_ = reader_.controls();
    if (ready)
        engine_.setControls(appliedControls_);

    // When the engine could not start, the plugin passes the microphone through with the latency it
    // would have had (one block), so the host's compensation does not jump. The bypass path's ring holds
    // the most safety blocks, so a change of them while playing never resizes it.
    const int latency = ready ? engine_.latencySamples() : maxBlock_;
    const int mostSafety = engine::RealtimeEngine::kMaxSafetyBlocks - (ready ? engine_.safetyBlocks() : 0);
    dryDelay_.prepare(micChannels_, latency + mostSafety * maxBlock_);
    farEnd_.assign(static_cast<std::size_t>(maxBlock_), 0.0f);
    wet_.assign(2, std::vector<float>(static_cast<std::size_t>(maxBlock_), 0.0f));
    dry_.assign(2, std::vector<float>(static_cast<std::size_t>(maxBlock_), 0.0f));
    bypass_.prepare(bypassFadeSeconds * sampleRate, reader_.bypassed() ? 1.0f : 0.0f);
    engine_.enableEchoPathSnapshots(ready);
    engineOffline_.store(offline);
    engineReady_.store(ready);
    setLatencySamples(latency);
}

int QuellProcessor::wantedSafetyBlocksLocked() const
{
    const int chosen = reader_.safetyBlocks();
    return chosen >= 0 ? chosen : engine::automaticSafetyBlocks(static_cast<int>(std::lround(sampleRate_)), maxBlock_);
}

void QuellProcessor::applySafetyBlocksLocked()
{
    const int wanted = wantedSafetyBlocksLocked();
    if (wanted == engine_.safetyBlocks())
        return;
    engine_.setSafetyBlocks(wanted);
    setLatencySamples(engine_.latencySamples());
}

void QuellProcessor::applyChoiceLocked(const CancellerChoice& choice)
{
    try {
        engine_.applySettings(toSettings(choice, engineOffline_.load()));
        backendNote_ = backendNote(choice, engine_.fallbackReason());
    } catch (const std::exception& e) {
        backendNote_ = std::string("settings not applied: ") + e.what();
    }
    applied_ = pending_ = choice;
}

void QuellProcessor::applyPendingSettings()
{
    const CancellerChoice wanted = reader_.choice();
    const std::lock_guard<std::mutex> lock(controlMutex_);
    if (!engineReady_.load() || engineOffline_.load())
        return;   // offline: the audio callback applies changes itself (no deadline there)
    applySafetyBlocksLocked();
    const juce::uint32 now = juce::Time::getMillisecondCounter();
    if (wanted == applied_) {
        pending_ = applied_;
        return;
    }
    if (!(wanted == pending_)) {
        pending_ = wanted;
        pendingSinceMs_ = now;
        return;
    }
    if (now - pendingSinceMs_ >= settingsDebounceMs)
        applyChoiceLocked(wanted);
}

void QuellProcessor::processBlock(juce::AudioBuffer<float>& buffer, juce::MidiBuffer&)
{
    process(buffer, false);
}

void QuellProcessor::processBlockBypassed(juce::AudioBuffer<float>& buffer, juce::MidiBuffer&)
{
    process(buffer, true);
}

void QuellProcessor::process(juce::AudioBuffer<float>& buffer, bool forceBypass) noexcept
{
    juce::ScopedNoDenormals noDenormals;
    const int n = buffer.getNumSamples();
    const bool offline = isNonRealtime();
    if (offline != engineOffline_.load() && maxBlock_ > 0) {
        // The host switched between real-time and offline rendering (see the header): no deadline
        // applies to the offline side of the switch.
        prepareEngine(sampleRate_, maxBlock_, offline);
    }
    if (offline && engineReady_.load()) {
        const CancellerChoice wanted = reader_.choice();
        const std::lock_guard<std::mutex> lock(controlMutex_);
        if (!(wanted == applied_))
            applyChoiceLocked(wanted);
        applySafetyBlocksLocked();
    }
    if (maxBlock_ == 0) {
        return;   // not prepared: leave the buffer as it is
    }

    const int channels = std::min(micChannels_, getMainBusNumInputChannels());
    const int sideOffset = getMainBusNumInputChannels();
    const int sideChannels = getBusCount(true) > 1 && getBus(true, 1)->isEnabled()
        ? std::min(getChannelCountOfBus(true, 1), buffer.getNumChannels() - sideOffset) : 0;
    const bool ready = engineReady_.load();
    if (ready) {
        // Lock-free hand-over to the engine's worker (no allocation): safe on the audio thread.
        const aec::CancellerControls controls = reader_.controls();
        if (!(controls == appliedControls_)) {
            engine_.setControls(controls);
            appliedControls_ = controls;
        }
    }
    const float target = forceBypass || reader_.bypassed() || !ready ? 1.0f : 0.0f;

    for (int offset = 0; offset < n;) {
        const int len = std::min(maxBlock_, n - offset);
        // Far end: the sidechain. A stereo one goes to the canceller as two channels (each
        // loudspeaker's path learnt as its own: CpuStereoFilter.cpp; mixed to mono, the two paths were
        // learnt as one, exact only when both play the same). A host that gives one channel where the
        // layout has two feeds it to both; a stereo sidechain to an engine prepared for one channel (a
        // layout changed without a new prepare) is mixed to mono.
        const float* refs[2] = {farEnd_.data(), farEnd_.data()};
        if (sideChannels == 0) {
            std::fill_n(farEnd_.data(), len, 0.0f);
        } else if (sideChannels == 1) {
            std::copy_n(buffer.getReadPointer(sideOffset, offset), len, farEnd_.data());
        } else if (farEndChannels_ == 2) {
            refs[0] = buffer.getReadPointer(sideOffset, offset);
            refs[1] = buffer.getReadPointer(sideOffset + 1, offset);
        } else {
            const float* l = buffer.getReadPointer(sideOffset, offset);
            const float* r = buffer.getReadPointer(sideOffset + 1, offset);
            for (int i = 0; i < len; ++i)
                farEnd_[static_cast<std::size_t>(i)] = 0.5f * (l[i] + r[i]);
        }
        const float* mic[2] = {nullptr, nullptr};
        float* wet[2] = {wet_[0].data(), wet_[1].data()};
        for (int c = 0; c < channels; ++c)
            mic[c] = buffer.getReadPointer(c, offset);
        if (ready) {
            engine_.process(mic, refs, wet, len);
        } else {
            for (int c = 0; c < channels; ++c)
                std::fill_n(wet[c], len, 0.0f);
        }
        float* dry[2] = {dry_[0].data(), dry_[1].data()};
        dryDelay_.process(mic, dry, static_cast<std::size_t>(channels), static_cast<std::size_t>(len),
                          static_cast<std::size_t>(ready ? engine_.latencySamples() : maxBlock_));

        // Mix: a short linear fade between the cancelled output and the delayed input on bypass changes.
        float* out[2] = {channels > 0 ? buffer.getWritePointer(0, offset) : nullptr,
                         channels > 1 ? buffer.getWritePointer(1, offset) : nullptr};
        bypass_.process(wet, dry, out, static_cast<std::size_t>(channels), static_cast<std::size_t>(len), target);
        for (int c = 0; c < channels; ++c)
            for (int i = 0; i < len; ++i)
                if (!(std::abs(out[c][i]) >= 1e-30f))
                    out[c][i] = 0.0f;   // flushes denormals (and would hide a NaN: the engine guarantees none)
        offset += len;
    }
    // Any extra output channels (a host giving more than the bus has) are silent.
    for (int c = channels; c < getTotalNumOutputChannels(); ++c)
        buffer.clear(c, 0, n);
}

PluginStatus QuellProcessor::status() const
{
    PluginStatus s;
    const std::unique_lock<std::mutex> lock(controlMutex_, std::try_to_lock);
    if (!lock.owns_lock())
        return s;   // being rebuilt right now: the editor keeps its last picture
    s.prepared = engineReady_.load();
    if (s.prepared)
        s.stats = engine_.stats();
    s.backendNote = backendNote_;
    s.sampleRate = sampleRate_;
    s.maxBlock = maxBlock_;
    s.micChannels = micChannels_;
    s.farEndChannels = farEndChannels_;
    s.cancellerRate = engine_.spec().cancellerRate;
    s.offline = engineOffline_.load();
    s.applied = applied_;
    return s;
}

bool QuellProcessor::echoPath(std::vector<float>& weights) const
{
    return engine_.echoPathSnapshot(weights);
}

void QuellProcessor::getStateInformation(juce::MemoryBlock& destData)
{
    const juce::ValueTree copy = state_.copyState();
    if (const std::unique_ptr<juce::XmlElement> xml = copy.createXml())
        copyXmlToBinary(*xml, destData);
}

void QuellProcessor::setStateInformation(const void* data, int sizeInBytes)
{
    if (const std::unique_ptr<juce::XmlElement> xml = getXmlFromBinary(data, sizeInBytes))
        if (xml->hasTagName(state_.state.getType()))
            state_.replaceState(juce::ValueTree::fromXml(*xml));
}

juce::AudioProcessorEditor* QuellProcessor::createEditor()
{
    return new QuellEditor(*this);
}

} // namespace quell::plugin

// The plugin wrappers' entry point.
juce::AudioProcessor* JUCE_CALLTYPE createPluginFilter()
{
    return new quell::plugin::QuellProcessor();
}
