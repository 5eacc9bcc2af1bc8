// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FilterPlan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "aec/CpuFilterChoice.h"

namespace quell::aec {
namespace {

std::atomic<bool> rememberingGpuSpeeds{false};

// measureGpuRlsSamplesPerSecond, or with rememberGpuSpeedMeasurements on its first answer for these
// settings in this process (the lock keeps a second measurement from running beside the first).
double gpuRlsSpeed(const dsp::RlsSettings& settings, std::size_t block)
{
    if (!rememberingGpuSpeeds.load())
        return measureGpuRlsSamplesPerSecond(settings, block);
    static std::mutex lock;
    static std::map<std::tuple<int, int, double, std::size_t>, double> speeds;
    const std::lock_guard<std::mutex> hold(lock);
    const auto key = std::make_tuple(settings.tapsPerChannel, settings.channels, settings.lambda, block);
    const auto known = speeds.find(key);
    if (known != speeds.end())
        return known->second;
    return speeds[key] = measureGpuRlsSamplesPerSecond(settings, block);
}

// An automatic length on a GPU takes the longest tail that runs at least this many times faster than
// real time (a real room's tail lasts 0.3 to 0.5 s: 64 ms leaves 10 to 25 dB of it to the suppressor).
constexpr double kAutomaticRealtime = 3.0;

// The Kalman filter's prior uncertainty decays across its partitions as a 0.3 s room's echo does (60 dB
// in 0.3 s; Pbfdkf.h has the measurements).
constexpr double kKalmanPriorDecayDbPerSecond = 200.0;
// Its process noise shrinks over this much adapted time after a (re)start (Pbfdkf.h, transitionGrowthBlocks).
constexpr double kKalmanMemoryGrowthSeconds = 2.0;

// A stereo far end with the filter and its length left to the canceller: the CPU's stereo filter at 256
// ms (makeCpuStereoFilter: the two-channel fast RLS, the Kalman filter and the fast RLS on the channels'
// mean side by side), on a machine with a GPU too (not where the GPU is asked for). Float32 RLS learns two
// strongly correlated channels' paths badly at room lengths. Physical corpus, speech in a 0.3 s room,
// steady ERLE with one mic / two mics / pink noise: GPU RLS at its automatic 2 x 2048 taps 25.0 / 22.0
// (one covariance re-initialisation) / 30.2 dB, at 2 x 4096 16.5 / 15.7 / 36.9 and ten times slower than
// real time; CPU float32 RLS at 2 x 1024 20.2 / 17.3 / 19.9; the Kalman filter at 2 x 4096 29.1 / 26.5 /
// 31.5, at a few per cent of a core (the best peer, on the downmix: WebRTC 0.3 27.8 / 27.6, SpeexDSP with
// its suppressor on the noise 32.3). The float64 two-channel fast RLS (dsp::StereoFastRls) at 2 x 4096:
// CpuStereoFilter.cpp has its figures.
bool stereoAutomatic(const EchoCancellerSettings& s, const dsp::ProcessSpec& spec, bool tapsAutomatic)
{
    return s.filter == FilterKind::Auto && tapsAutomatic && spec.channels == 2 && s.backend != Backend::Gpu;
}

// The CPU runs the Kalman filter without timing RLS only where it is asked for (a stereo far end with
// everything automatic runs the stereo filter, which holds it among others: planStereoFilter). One far-end
// channel with everything automatic runs RLS at 256 ms, offline and in real time: the fast RLS (dsp::FastRls) affords
// it at a tenth of a core. Physical corpus, the 33 mono files with echo, every other setting at its
// default (Tests/eval/results/2026-11-27/cpu-fast-rls against .../cpu-filters/kalman4096): mean steady
// ERLE 29.5 dB against the Kalman filter's 26.8 at the same 4096 taps; near-end SNR after the fit in
// double talk at 0 dB echo-to-near-end 39.6 / 35.9 / 40.1 (RT60 0.2 / 0.3 / 0.4 s) against 22.6 / 22.5 /
// 31.6, with the echo 6 dB louder 33.3 / 31.3 against 20.4 / 20.1. The Kalman filter keeps its lead at 10
// dB echo-to-noise on noise far ends (22.4 / 21.2 against 19.9 / 20.0), where the RLS's 2.6 s memory
// leaves more noise in its weights, and on the speech path change (28.8 against 26.1). Since 9a657ef and
// d0bc5da (the fast RLS's restart, the foreground's refinement at its noise floor; .../cpu-d0bc5da): mean
// 30.0, the path change 29.8, the noise far ends 21.1 / 20.8 (the Kalman filter's lead there down to
// 1.3 / 0.4 dB).
bool kalmanOutright(const EchoCancellerSettings& s)
{
    return s.filter == FilterKind::Kalman;
}

// The CPU's RLS at an automatic length: 256 ms where it is a fast RLS (one or two far-end channels:
// dsp::FastRls, dsp::StereoFastRls).
bool cpuRlsLong(const EchoCancellerSettings& s, const dsp::ProcessSpec& spec)
{
    return spec.channels <= 2 && (s.filter == FilterKind::Auto || s.filter == FilterKind::Rls);
}

dsp::RlsSettings rlsFor(const EchoCancellerSettings& s, const dsp::ProcessSpec& spec, int tapsPerChannel)
{
    dsp::RlsSettings r;
    r.tapsPerChannel = tapsPerChannel;
    r.channels = spec.channels;
    EchoCancellerSettings resolved = s;
    resolved.taps = tapsPerChannel;
    r.lambda = effectiveLambda(resolved, spec.channels);
    r.delta = effectiveDelta(s, r.totalTaps());
    r.traceCheckSamples = segmentSamples(spec.sampleRate);
    return r;
}

// The length per far-end channel when settings.taps is 0, and what to say about it.
int automaticTaps(const EchoCancellerSettings& s, const dsp::ProcessSpec& spec, std::string& note)
{
    const int rate = spec.sampleRate;
    auto tapsFor = [&](double seconds) { return std::max(4, static_cast<int>(std::lround(seconds * rate / 4.0)) * 4); };
    bool gpuRuns = false;   // a GPU RLS runs here, if too slow for the longer tails (then 1024 taps on it)
    if (s.backend != Backend::Cpu && !cpuOnly(s.filter) && !stereoAutomatic(s, spec, true)) {
        for (const double seconds : {0.256, 0.128}) {
            const int taps = tapsFor(seconds);
            // 0 where the GPU cannot run these settings (measureGpuRlsSamplesPerSecond asks gpuRlsWhyNot).
            const double speed = gpuRlsSpeed(rlsFor(s, spec, taps), static_cast<std::size_t>(segmentSamples(rate)));
            gpuRuns = gpuRuns || speed > 0.0;
            if (speed >= kAutomaticRealtime * rate) {
                char text[120];
                std::snprintf(text, sizeof text, " (automatic: %.0f ms, %.1fx real time measured)", seconds * 1000.0,
                              speed / rate);
                note = text;
                return taps;
            }
        }
    }
    // The CPU's Kalman filter and its fast RLS filters afford the GPU's longest tail in real time.
    if (!gpuRuns && (kalmanOutright(s) || cpuRlsLong(s, spec))) {
        note = stereoAutomatic(s, spec, true) ? " (automatic: 256 ms for a stereo far end)" : " (automatic: 256 ms)";
        return tapsFor(0.256);
    }
    note = " (automatic)";
    return 1024;
}

} // namespace

void rememberGpuSpeedMeasurements(bool on) { rememberingGpuSpeeds.store(on); }

const char* toString(FilterEngine engine)
{
    switch (engine) {
    case FilterEngine::GpuRls: return "GPU RLS";
    case FilterEngine::CpuRls: return "CPU RLS";
    case FilterEngine::CpuKalman: return "CPU Kalman";
    case FilterEngine::CpuNlms: return "CPU NLMS";
    }
    return "?";
}

dsp::PbfdkfSettings FilterPlan::kalmanSettings() const
{
    dsp::PbfdkfSettings k;
    k.taps = rls.tapsPerChannel;
    k.channels = rls.channels;
    k.uncertaintyDecayDbPerTap = kKalmanPriorDecayDbPerSecond / spec.sampleRate;
    // Not for a stereo far end: its two paths are learnt from strongly correlated channels, the weights
    // move along what the correlation leaves undetermined whenever it changes (a far-end talker moves),
    // and the filter must keep following that. Physical corpus, speech, two mics: 27.2 dB steady ERLE with a
    // fixed A, 20.6 with the schedule.
    k.blockSize = kalmanBlockSize;
    const int block = kalmanBlockSize != 0 ? kalmanBlockSize : dsp::automaticBlockSize(k.taps);
    k.transitionGrowthBlocks = k.channels == 1 ? kKalmanMemoryGrowthSeconds * spec.sampleRate / block : 0.0;
    return k;
}

ForegroundSettings FilterPlan::foregroundSettings(int segmentSamples) const
{
    ForegroundSettings fg;
    fg.tapsPerChannel = tapsPerChannel();
    fg.channels = channels();
    fg.segmentSamples = segmentSamples;
    if (engine == FilterEngine::CpuKalman) {
        // The Kalman filter gains its reduction a fraction of a dB at a time over seconds (RLS in tens of
        // milliseconds), and its weights move once per block (8 ms) by steps its uncertainty bounds. Behind
        // it a foreground short of goodForegroundDb took a snapshot only 3 dB better, after 70 ms of
        // probation at 4096 taps, and lagged the filter by 3 to 6 dB of linear ERLE in far-end single
        // talk (physical corpus, speech rooms, --suppression 0: 17.9-20.4 dB against 22.8-24.2 with the
        // filter's own output). Measured with the suppressor and the process noise's schedule (mean steady
        // ERLE of the 5 speech rooms / mean near-end SNR after the fit of the 9 double-talk files / the
        // worst lone near end over line noise): 1 dB better and 3 segments 27.6 / 21.2 / 122.0 dB, the
        // RLS's 3 dB and a quarter of the length 26.9 / 20.4 / 122.0. Lost: the speech path change, 28.1 ->
        // 26.5 dB (5 segments 27.0, 3 dB 26.5: the probation's length and bar do not explain it alone).
        fg.copyWhenLeavingMuchBelow = 0.8;
        fg.probationSegments = 3;
        // And its refinements too (the RLS's one segment: mean steady ERLE of the 36 files with echo 26.94
        // -> 26.97 dB, near-end SNR in double talk 23.03 -> 22.94, the stereo pair with two mics 25.7 ->
        // 24.2): its weights move by bounded steps once a block, not after each chord of music.
        fg.refineProbationSegments = 3;
    }
    return fg;
}

double FilterPlan::alignEchoStartFraction() const
{
    // The Kalman filter's prior decays from its first taps (PbfdkfSettings::uncertaintyDecayDbPerTap): a
    // white far end whose echo came 100 ms late (at tap 1600 of 4096, 20 dB under that prior) left the
    // output the microphone's to the sample for 5 s. So for it a quarter (64 ms at 4096 taps; the prior
    // 13 dB down there): that file then reaches 32.5 dB (t20 0.5 s), and no file of the physical corpus
    // changes in any figure. Every delay past the margin (0) cost double talk in a 0.4 s room, where the
    // estimate follows reflections: near-end SNR after the fit 18.0 -> -1.5 dB with the echo 6 dB louder.
    return engine == FilterEngine::CpuKalman ? 0.25 : AlignerSettings{}.echoStartFraction;
}

namespace {

// A stereo far end's automatic filter on the CPU (CpuStereoFilter.cpp says why each part runs): the
// two-channel fast RLS of plan.rls leading, the Kalman filter, the two-channel fast RLS of half its taps
// and the fast RLS on the channels' mean beside it. Offline always; in real time what fits the budget as
// chooseRealtimeCpuFilter judges a filter (kRealtimeHeadroom of it), in this order: all four; the three
// without the half; the two-channel fast RLS alone; the Kalman filter
// with the mean's RLS; the Kalman filter alone. The printed choice says which and why. The fast RLS alone
// comes before the Kalman filter with the mean's: it keeps most of what the three do (physical corpus,
// the seven stereo files, steady ERLE within 0.1 dB of the three's but true stereo double talk 22.6
// against 22.5 and pink noise in both channels reaching 20 dB in 0.40 s against 0.30; the near end in
// double talk 27.9 dB after the fit against the Kalman filter's 14.2), at about 0.25 of a core here where
// the three take 0.35 to 0.38, near the 0.4 that half a core allows.
void planStereoFilter(const EchoCancellerSettings& settings, FilterPlan& plan)
{
    dsp::ProcessSpec mono = plan.spec;
    mono.channels = 1;
    const dsp::RlsSettings mean = rlsFor(settings, mono, plan.rls.tapsPerChannel);
    std::optional<dsp::RlsSettings> half;
    if (plan.rls.tapsPerChannel / 2 >= 2)
        half = rlsFor(settings, plan.spec, plan.rls.tapsPerChannel / 2);
    plan.engine = FilterEngine::CpuRls;
    if (settings.cpuRealtimeBudget <= 0.0) {
        plan.stereoMeanRls = mean;
        plan.stereoHalfRls = half;
        return;
    }
    const int rate = plan.spec.sampleRate;
    const double kalman = measureKalmanSecondsPerSample(plan.kalmanSettings()) * rate;
    const double withMean = kalman + measureRlsSecondsPerSample(mean.tapsPerChannel, 1) * rate;
    const double stereo = measureRlsSecondsPerSample(plan.rls.tapsPerChannel, 2) * rate;
    const double all = withMean + stereo;
    const double budget = kRealtimeHeadroom * settings.cpuRealtimeBudget;
    char why[220];
    const double withHalf = half && all <= budget ? all + measureRlsSecondsPerSample(half->tapsPerChannel, 2) * rate : 0.0;
    if (half && all <= budget && withHalf <= budget) {
        plan.stereoMeanRls = mean;
        plan.stereoHalfRls = half;
        std::snprintf(why, sizeof why, " (%.2f of a core)", withHalf);
    } else if (all <= budget) {
        plan.stereoMeanRls = mean;
        std::snprintf(why, sizeof why, " (%.2f of a core)", all);
    } else if (stereo <= budget) {
        std::snprintf(why, sizeof why, " (alone, %.2f of a core: with the Kalman filter and the mean's RLS beside it %.2f)", stereo, all);
    } else if (withMean <= budget) {
        plan.engine = FilterEngine::CpuKalman;
        plan.stereoMeanRls = mean;
        std::snprintf(why, sizeof why, " (the Kalman filter and the mean's RLS, %.2f of a core: the two-channel fast RLS alone %.2f)",
                      withMean, stereo);
    } else {
        plan.engine = FilterEngine::CpuKalman;
        std::snprintf(why, sizeof why, " (the Kalman filter alone: with the fast RLS on the channels' mean it would need %.2f of a core)",
                      withMean);
    }
    plan.choice = why + plan.choice;
}

} // namespace

FilterPlanResult planLinearFilter(const EchoCancellerSettings& settings, const dsp::ProcessSpec& spec)
{
    FilterPlanResult result;
    auto refuse = [&](FilterPlanResult::Refusal refusal, std::string why) {
        result.refusal = refusal;
        result.whyNot = std::move(why);
        return result;
    };
    try {
        validate(settings, spec);
    } catch (const std::invalid_argument& e) {
        return refuse(FilterPlanResult::Refusal::BadSettings, e.what());
    }
    if (settings.backend == Backend::Gpu && cpuOnly(settings.filter))
        return refuse(FilterPlanResult::Refusal::BadSettings, std::string(settings.filter == FilterKind::Kalman ? "the Kalman filter" : "NLMS")
                                                                  + " runs on the CPU (--backend cpu or auto)");
    if (settings.filter == FilterKind::Nlms && spec.channels > 1)
        return refuse(FilterPlanResult::Refusal::BadSettings,
                      "NLMS takes one far-end channel (got " + std::to_string(spec.channels) + "): rls, kalman or a mono far end");

    FilterPlan& plan = result.plan;
    const bool tapsAutomatic = settings.taps == 0;
    plan.rls = rlsFor(settings, spec, tapsAutomatic ? automaticTaps(settings, spec, plan.choice) : settings.taps);
    plan.spec = spec;
    plan.cpuThreads = settings.cpuThreads;
    plan.kalmanBlockSize = settings.kalmanBlockSize;
    const dsp::RlsSettings& rls = plan.rls;
    try {
        dsp::validate(rls);
    } catch (const std::invalid_argument& e) {
        return refuse(FilterPlanResult::Refusal::BadSettings, e.what());
    }

    if (settings.backend != Backend::Cpu && !cpuOnly(settings.filter) && !stereoAutomatic(settings, spec, tapsAutomatic)) {
        std::string whyNot = gpuRlsWhyNot(rls, spec.maximumBlockSize);
        if (whyNot.empty()) {
            plan.engine = FilterEngine::GpuRls;
            return result;
        }
        if (settings.backend == Backend::Gpu)
            return refuse(FilterPlanResult::Refusal::GpuUnavailable, "--backend gpu: no usable GPU for these settings (" + whyNot + ")");
        plan.fallbackReason = std::move(whyNot);
    }
    if (settings.filter == FilterKind::Nlms) {
        plan.engine = FilterEngine::CpuNlms;
    } else if (stereoAutomatic(settings, spec, tapsAutomatic)) {
        planStereoFilter(settings, plan);
    } else if (kalmanOutright(settings)) {
        plan.engine = FilterEngine::CpuKalman;
    } else if (settings.cpuRealtimeBudget > 0.0) {
        const CpuFilterChoice choice = chooseRealtimeCpuFilter(rls, plan.kalmanSettings(), spec.sampleRate,
                                                               settings.cpuRealtimeBudget);
        plan.engine = choice.engine;
        plan.choice = choice.why + plan.choice;
    } else {
        plan.engine = FilterEngine::CpuRls;
    }
    if (plan.engine == FilterEngine::CpuRls && settings.cpuRealtimeBudget > 0.0)
        plan.cpuThreads = 1;   // the real-time filter runs on one thread (as timed)
    return result;
}

std::unique_ptr<LinearEchoFilter> makeLinearFilter(const FilterPlan& plan)
{
    switch (plan.engine) {
    case FilterEngine::GpuRls: return makeGpuRlsFilter(plan.rls, plan.spec.maximumBlockSize);
    case FilterEngine::CpuRls:
        if (plan.stereoMeanRls)
            return makeCpuStereoFilter(plan.kalmanSettings(), *plan.stereoMeanRls, plan.rls, plan.stereoHalfRls);
        return makeCpuRlsFilter(plan.rls, plan.cpuThreads);
    case FilterEngine::CpuKalman:
        if (plan.stereoMeanRls)
            return makeCpuStereoFilter(plan.kalmanSettings(), *plan.stereoMeanRls);
        return makeCpuKalmanFilter(plan.kalmanSettings());
    case FilterEngine::CpuNlms: return makeCpuNlmsFilter(plan.tapsPerChannel());
    }
    throw std::logic_error("makeLinearFilter: unknown engine");
}

} // namespace quell::aec
