// SPDX-License-Identifier: GPL-3.0-or-later
#include "QuellEditor.h"

#include "QuellParameters.h"
#include "QuellProcessor.h"

namespace quell::plugin {
namespace {

const juce::Colour background(0xff0b0f16);
const juce::Colour accent(0xff4fc3f7);

void styleLabel(juce::Label& label, const juce::String& text, float size = 13.0f)
{
    label.setText(text, juce::dontSendNotification);
    label.setFont(juce::Font(size));
    label.setColour(juce::Label::textColourId, juce::Colours::white.withAlpha(0.85f));
}

// Places components left to right in `row`, each in a cell of its width; a null component is a gap.
void layOutRow(juce::Rectangle<int> row, std::initializer_list<std::pair<juce::Component*, int>> cells)
{
    for (const auto& [component, width] : cells) {
        const auto cell = row.removeFromLeft(width);
        if (component != nullptr)
            component->setBounds(cell);
    }
}

} // namespace

QuellEditor::QuellEditor(QuellProcessor& owner)
    : AudioProcessorEditor(owner),
      processor_(owner),
      erle_("ERLE (echo removed)", 0.0f, 60.0f, juce::Colour(0xff66bb6a)),
      mic_("Microphone in", -60.0f, 0.0f, accent),
      farEnd_("Far end (sidechain)", -60.0f, 0.0f, juce::Colour(0xffffb74d)),
      out_("Output", -60.0f, 0.0f, juce::Colour(0xffba68c8))
{
    auto& state = owner.parameters();
    for (juce::Component* c : std::initializer_list<juce::Component*>{&erle_, &mic_, &farEnd_, &out_, &plot_, &backend_, &counters_,
                                                                      &length_, &backendChoice_, &forgetting_, &forgettingAuto_, &suppression_,
                                                                      &adaptation_, &comfortNoise_, &bypass_, &lengthLabel_,
                                                                      &backendLabel_, &forgettingLabel_, &suppressionLabel_,
                                                                      &safety_, &safetyLabel_, &controlsHint_})
        addAndMakeVisible(c);

    styleLabel(backend_, "starting...", 14.0f);
    backend_.setJustificationType(juce::Justification::topLeft);
    backend_.setMinimumHorizontalScale(1.0f);   // wrap onto the second line rather than squeeze
    styleLabel(counters_, "");
    styleLabel(lengthLabel_, "Filter length");
    styleLabel(backendLabel_, "Backend");
    styleLabel(forgettingLabel_, "Forgetting factor");
    styleLabel(suppressionLabel_, "Residual suppression (dB)");
    styleLabel(safetyLabel_, "Safety blocks");
    safetyLabel_.setTooltip("Each adds a host block of latency and a block period of slack against late blocks");
    styleLabel(controlsHint_, "Freeze holds the echo path in use; suppression takes out what the filter leaves, up to this many dB; comfort noise keeps the background steady.", 11.0f);
    controlsHint_.setColour(juce::Label::textColourId, juce::Colours::white.withAlpha(0.45f));

    length_.addItemList(state.getParameter(ParamId::filterLength)->getAllValueStrings(), 1);
    backendChoice_.addItemList(state.getParameter(ParamId::backend)->getAllValueStrings(), 1);
    safety_.addItemList(state.getParameter(ParamId::safetyBlocks)->getAllValueStrings(), 1);
    for (juce::Slider* s : {&forgetting_, &suppression_}) {
        s->setSliderStyle(juce::Slider::LinearHorizontal);
        s->setTextBoxStyle(juce::Slider::TextBoxRight, false, 70, 20);
        s->setColour(juce::Slider::thumbColourId, accent);
    }
    lengthAttachment_ = std::make_unique<ComboAttachment>(state, ParamId::filterLength, length_);
    backendAttachment_ = std::make_unique<ComboAttachment>(state, ParamId::backend, backendChoice_);
    safetyAttachment_ = std::make_unique<ComboAttachment>(state, ParamId::safetyBlocks, safety_);
    forgettingAttachment_ = std::make_unique<SliderAttachment>(state, ParamId::forgetting, forgetting_);
    suppressionAttachment_ = std::make_unique<SliderAttachment>(state, ParamId::suppression, suppression_);
    forgettingAutoAttachment_ = std::make_unique<ButtonAttachment>(state, ParamId::forgettingAuto, forgettingAuto_);
    adaptationAttachment_ = std::make_unique<ButtonAttachment>(state, ParamId::adaptation, adaptation_);
    comfortNoiseAttachment_ = std::make_unique<ButtonAttachment>(state, ParamId::comfortNoise, comfortNoise_);
    bypassAttachment_ = std::make_unique<ButtonAttachment>(state, ParamId::bypass, bypass_);

    setSize(760, 520);
    timerCallback();
    startTimerHz(15);
}

QuellEditor::~QuellEditor() { stopTimer(); }

void QuellEditor::timerCallback()
{
    const PluginStatus s = processor_.status();
    forgetting_.setEnabled(!forgettingAuto_.getToggleState());   // the slider counts only with Auto off
    if (s.prepared) {
        const auto& st = s.stats;
        erle_.setValue(static_cast<float>(st.erleDb), st.refLevelDb > -50.0);
        mic_.setValue(static_cast<float>(st.micLevelDb));
        farEnd_.setValue(static_cast<float>(st.refLevelDb));
        out_.setValue(static_cast<float>(st.outLevelDb));
        juce::String line = st.onGpu ? "GPU: " : "CPU: ";
        line << juce::String(st.mode);
        if (!st.onGpu && !s.backendNote.empty())
            line << "\n" << juce::String(s.backendNote);
        backend_.setText(line, juce::dontSendNotification);
        backend_.setColour(juce::Label::textColourId, st.onGpu ? juce::Colour(0xff81c784) : juce::Colour(0xffffcc80));
        juce::String counters;
        counters << "Late blocks: " << juce::String(static_cast<juce::int64>(st.lateBlocks)) << " of "
                 << juce::String(static_cast<juce::int64>(st.callbacks)) << "    Latency: " << st.latencySamples << " samples ("
                 << juce::String(st.latencyMs, 1) << " ms" << (st.safetyBlocks > 0 ? ", " + juce::String(st.safetyBlocks) + " safety" : juce::String())
                 << ")    " << juce::String(s.sampleRate / 1000.0, 1) << " kHz, block "
                 << s.maxBlock << ", mic " << (s.micChannels == 2 ? "stereo" : "mono") << ", far end "
                 << (s.farEndChannels == 0 ? "off" : s.farEndChannels == 2 ? "stereo" : "mono")
                 << (s.offline ? ", offline render" : "");
        if (st.processing.count > 0)
            counters << "    Block time p99: " << juce::String(juce::roundToInt(st.processing.p99Us)) << " us";
        counters_.setText(counters, juce::dontSendNotification);
    } else if (s.sampleRate == 0.0) {
        backend_.setText("Not playing yet (the engine starts when the host prepares the plugin)", juce::dontSendNotification);
    } else if (!s.backendNote.empty()) {
        backend_.setText(juce::String(s.backendNote), juce::dontSendNotification);
    }
    if (s.cancellerRate > 0 && processor_.echoPath(weights_)) {
        if (s.farEndChannels == 2)
            weights_.resize(weights_.size() / 2);   // the left loudspeaker's path (the weights hold both, channel after channel)
        plot_.setWeights(weights_, s.cancellerRate);
    }
}

void QuellEditor::paint(juce::Graphics& g)
{
    g.fillAll(background);
    g.setColour(juce::Colours::white);
    g.setFont(juce::Font(22.0f, juce::Font::bold));
    g.drawText("Quell", 16, 10, 100, 28, juce::Justification::centredLeft);
    g.setColour(juce::Colours::white.withAlpha(0.55f));
    g.setFont(13.0f);
    g.drawText("acoustic echo canceller  -  far end on the sidechain", 90, 12, 400, 26, juce::Justification::centredLeft);
}

void QuellEditor::resized()
{
    auto area = getLocalBounds().reduced(16);
    area.removeFromTop(30);
    backend_.setBounds(area.removeFromTop(36));   // two lines: mode, and why there is no GPU
    area.removeFromTop(4);

    auto top = area.removeFromTop(222);
    auto meters = top.removeFromLeft(230);
    for (LevelMeter* m : {&erle_, &mic_, &farEnd_, &out_}) {
        m->setBounds(meters.removeFromTop(52).withTrimmedBottom(8));
    }
    top.removeFromLeft(12);
    plot_.setBounds(top);

    area.removeFromTop(8);
    counters_.setBounds(area.removeFromTop(22));
    area.removeFromTop(8);

    auto row = [&area](int height) {
        auto r = area.removeFromTop(height);
        area.removeFromTop(6);
        return r;
    };
    layOutRow(row(26), {{&lengthLabel_, 100}, {&length_, 170}, {nullptr, 20}, {&backendLabel_, 70},
                        {&backendChoice_, 100}, {nullptr, 20}, {&bypass_, 100}});
    layOutRow(row(26), {{&forgettingLabel_, 130}, {&forgetting_, 170}, {&forgettingAuto_, 60}, {nullptr, 20},
                        {&adaptation_, 170}, {nullptr, 10}, {&safetyLabel_, 95}, {&safety_, 70}});
    layOutRow(row(26), {{&suppressionLabel_, 170}, {&suppression_, 190}, {nullptr, 20}, {&comfortNoise_, 170}});

    controlsHint_.setBounds(row(18));
}

} // namespace quell::plugin
