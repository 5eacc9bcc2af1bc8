// SPDX-License-Identifier: GPL-3.0-or-later
// quell-eval: Quell's echo canceller and its peers (SpeexDSP, WebRTC 0.3) on every scenario of a corpus
// made by quell-corpus, one table of issue 7's figures (see EchoMetrics.h for the definitions).
//
//   quell-eval --corpus DIR [canceller options] [--threads T] [--one-path]
//              [--downmix] [--no-restart] [--no-drift] [--only SUBSTRING]
//              [--exclude SUBSTRING] [--no-peers] [--json FILE] [--markdown FILE] [--assert [--targets ci-rls|realtime-cpu|cpu-defaults]] [--trace FILE]
//
// The canceller options are quell-render's (--taps, --lambda, --backend, --filter, --suppression,
// --no-comfort-noise, --distortion-model; Standalone/CancellerOptions.h), with this program's defaults:
// 1024 taps (`--taps auto`: the automatic length), the CPU, one RLS thread. --downmix: Quell gets a
// stereo far end mixed to mono, as the peers do (default: both channels, N taps each, one multichannel
// RLS). --no-restart, --no-drift: without the covariance restart on a path change, without clock drift compensation (ablations).
//
// --backend gpu runs Quell's RLS on the GPU (a stereo far end as two channels there too, unless
// --downmix). --only / --exclude: scenarios whose name contains / does not contain the text.
//
// --markdown writes the comparison table (ComparisonTable.h): per scenario Quell beside the best peer.
//
// --trace writes every single-talk frame's ERLE (scenario, canceller, time s, ERLE dB; tab-separated):
// the convergence curves behind t10, t20 and reconv.
//
// --assert checks Quell against the targets it meets on the short corpus (quell-corpus --short), see
// AssertedTargets.cpp; exit status 1 when one fails. CI runs it on `quell-corpus --short --rir-ms 14`
// with --taps 256 (Tests/eval/CMakeLists.txt).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/AssertedTargets.h"
#include "eval/ComparisonTable.h"
#include "eval/CorpusScenario.h"
#include "eval/EchoMetrics.h"
#include "eval/EvalCanceller.h"
#include "io/CommandLine.h"
#include "CancellerOptions.h"

using namespace quell::eval;

namespace {

// A figure for the JSON report: null when absent (and, as nlohmann writes them, when not finite).
nlohmann::ordered_json figure(const std::optional<double>& v)
{
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// The lag (0 to 50 ms) of the largest correlation between a canceller's output and its microphone, on
// 2 s of near-end white noise with a silent far end.
int measureLatency(EvalCanceller& c, int rate)
{
    std::mt19937 rng(7);
    std::normal_distribution<float> g(0.0f, 0.03f);
    std::vector<float> mic(2 * rate);
    for (auto& v : mic)
        v = g(rng);
    const std::vector<std::vector<float>> ref(1, std::vector<float>(mic.size(), 0.0f));
    const std::vector<float> out = c.run(mic, ref, rate);
    int best = 0;
    double bestC = 0.0;
    for (int lag = 0; lag <= rate / 20; ++lag) {
        double acc = 0.0;
        for (std::size_t i = rate / 2; i + lag < out.size(); ++i)
            acc += double(out[i + lag]) * mic[i];
        if (std::abs(acc) > bestC) {
            bestC = std::abs(acc);
            best = lag;
        }
    }
    return best;
}

std::optional<double> delayMs(const EvalCanceller& c)
{
    const double d = c.lastDelayFoundMs();
    return std::isnan(d) ? std::nullopt : std::optional<double>(d);
}

} // namespace

int main(int argc, char** argv)
{
    std::string corpus, only, exclude, jsonPath, tracePath, markdownPath;
    QuellOptions qo;
    bool peers = true, check = false;
    quell::standalone::ProgramOptions cli(
        "quell-eval",
        "usage: quell-eval --corpus DIR [canceller options] [--threads T] [--one-path] [--downmix] [--no-restart]\n"
        "                  [--no-drift] [--only SUBSTRING] [--exclude SUBSTRING] [--no-peers] [--json FILE]\n"
        "                  [--markdown FILE] [--assert [--targets ci-rls|realtime-cpu|cpu-defaults]] [--trace FILE]",
        quell::standalone::ProgramOptions::versionLine("quell-eval"));
    cli.text("--corpus", "DIR", corpus, "the corpus quell-corpus wrote");
    cli.integer("--threads", "T", qo.settings.cpuThreads, 0, 256, "threads for the CPU RLS's row pass (0: automatic)");
    cli.text("--only", "SUBSTRING", only, "only the scenarios whose name contains it");
    cli.text("--exclude", "SUBSTRING", exclude, "leave out the scenarios whose name contains it");
    cli.flag("--no-peers", "Quell alone, without SpeexDSP and WebRTC", [&peers] { peers = false; });
    cli.text("--json", "FILE", jsonPath, "every figure as JSON");
    cli.text("--markdown", "FILE", markdownPath, "the comparison tables (Quell beside the best peer)");
    cli.text("--trace", "FILE", tracePath, "every single-talk frame's ERLE");
    cli.flag("--assert", check, "check the targets CI asserts (Tests/eval/AssertedTargets.cpp)");
    std::optional<TargetProfile> profile;
    cli.option("--targets", "ci-rls|realtime-cpu|cpu-defaults",
               "which targets --assert checks: the CI filter's (RLS at 256 taps), the CPU's real-time filter's "
               "(against the best peer), or the CPU defaults' (those and the near end in double talk); default: "
               "realtime-cpu for the Kalman filter and NLMS, else ci-rls",
               [&profile](const std::string& v) {
                   if (v == "ci-rls")
                       profile = TargetProfile::CiRls;
                   else if (v == "realtime-cpu")
                       profile = TargetProfile::RealtimeCpu;
                   else if (v == "cpu-defaults")
                       profile = TargetProfile::CpuDefaults;
                   else
                       throw quell::io::UsageError("--targets: ci-rls, realtime-cpu or cpu-defaults, not '" + v + "'");
               });
    cli.group("Ablations");
    cli.flag("--one-path", "no two-path foreground (the adaptive filter's output)", [&qo] { qo.settings.twoPath = false; });
    cli.flag("--downmix", "a stereo far end mixed to mono", [&qo] { qo.multichannel = false; });
    cli.flag("--no-restart", "no covariance restart on an echo-path change", [&qo] { qo.settings.restartOnPathChange = false; });
    cli.flag("--no-drift", "no clock-drift compensation", [&qo] { qo.settings.drift.enabled = false; });
    cli.group("Canceller options (as quell-render's; here 1024 taps and the CPU by default)");
    quell::standalone::addCancellerOptions(cli, qo.settings, quell::standalone::CancellerUse::Offline);
    try {
        if (!cli.parse(argc, argv))
            return 0;
        if (corpus.empty())
            throw quell::io::UsageError("--corpus is required (see --help)");
    } catch (...) {
        return quell::io::reportCurrentException("quell-eval");
    }

    std::vector<std::unique_ptr<EvalCanceller>> cancellers;
    cancellers.push_back(makeQuellCanceller(qo));
    if (peers) {
        std::string why;
        for (bool res : {false, true}) {
            if (auto c = makeSpeexCanceller(res, why)) cancellers.push_back(std::move(c));
            else { std::cout << "skipping peer speex" << (res ? "+res" : "") << ": " << why << "\n"; }
        }
        if (auto c = makeWebRtcCanceller(why)) cancellers.push_back(std::move(c));
        else std::cout << "skipping peer webrtc: " << why << "\n";
    }

    // Each canceller's latency, measured once on a probe (near-end noise alone, silent far end).
    std::map<std::string, int> latencies;
    for (const auto& c : cancellers) {
        try {
            latencies[c->name()] = measureLatency(*c, 16000);
        } catch (const std::exception& e) {
            std::cerr << "quell-eval: " << c->name() << ": " << e.what() << "\n";
            return 2;
        }
        if (latencies[c->name()] != 0)
            std::cout << c->name() << ": output latency " << latencies[c->name()]
                      << " samples, compensated in the figures\n";
    }

    std::ofstream trace;
    if (!tracePath.empty()) {
        trace.open(tracePath);
        if (!trace) {
            std::cerr << "quell-eval: cannot write " << tracePath << "\n";
            return 2;
        }
        trace << "scenario\tcanceller\ttime_s\terle_db\n";
    }
    std::vector<std::string> failures;
    std::vector<ScenarioResult> results;
    std::map<std::string, EchoFigures> quellEarlier;   // Quell's figures by scenario, for the narrowband and quiet twins
    nlohmann::ordered_json report = {{"corpus", corpus}, {"results", nlohmann::ordered_json::array()}};
    std::printf("%-40s %-10s %8s %8s %6s %6s %7s %8s %7s %7s %8s %7s %7s %6s %6s %8s\n", "scenario", "canceller", "erle_db",
                "mic/out", "t10_s", "t20_s", "reconv", "min_erle", "dt_snr", "alone_l", "nsnr_fit", "loud_db", "loud_ch",
                "reinit", "x_rt", "delay_ms");
    try {
        for (const auto& dir : listScenarios(corpus)) {
            const std::string name = dir.filename().string();
            if ((!only.empty() && name.find(only) == std::string::npos)
                || (!exclude.empty() && name.find(exclude) != std::string::npos))
                continue;
            const CorpusScenario s = loadScenario(dir);
            const double seconds = static_cast<double>(s.mic.size()) / s.sampleRate;
            const std::size_t first = results.size();
            double quellDelay = 0.0;
            long quellReinits = 0;
            for (auto& c : cancellers) {
                const auto start = std::chrono::steady_clock::now();
                std::vector<float> out = c->run(s.mic, s.ref, s.sampleRate);
                const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                // Measured against the input timing: the canceller's own latency (a frame of look-ahead) is
                // not counted as a loss of the near end.
                const int latency = latencies.at(c->name());
                out.erase(out.begin(), out.begin() + latency);
                out.resize(s.mic.size(), 0.0f);
                std::vector<float> near = s.near, echo = s.echo, noise = s.noise;
                c->frontEnd(near, s.sampleRate);
                c->frontEnd(echo, s.sampleRate);
                c->frontEnd(noise, s.sampleRate);
                const EchoFigures f = measure(s, out, near, echo, noise);
                const std::optional<double> delay = delayMs(*c);
                results.push_back({s.name, c->name(), f, delay});
                const long reinits = c->lastReinitialisations();
                const std::optional<double> reinit = reinits >= 0 ? std::optional<double>(reinits) : std::nullopt;
                std::printf("%-40s %-10s %8s %8s %6s %6s %7s %8s %7s %7s %8s %7s %7s %6s %6s %8s\n", s.name.c_str(),
                            c->name().c_str(), formatFigure(f.steadyErleDb).c_str(),
                            formatFigure(f.steadyMicOverOutDb).c_str(), formatFigure(f.timeTo10dB, 2).c_str(),
                            formatFigure(f.timeTo20dB, 2).c_str(), formatFigure(f.reconvergeTo20dB, 2).c_str(),
                            formatFigure(f.minErleDb).c_str(), formatFigure(f.doubleTalkSnrDb).c_str(),
                            formatFigure(f.nearAloneLossDb).c_str(), formatFigure(f.nearSnrFitDb).c_str(),
                            formatFigure(f.loudestFrameDb).c_str(), formatFigure(f.loudestAfterChangeDb).c_str(),
                            formatFigure(reinit, 0).c_str(), formatFigure(took / seconds, 2).c_str(),
                            formatFigure(delay, 1).c_str());
                std::fflush(stdout);
                if (trace.is_open())
                    for (const auto& [t, erle] : f.erleTrace)
                        trace << s.name << '\t' << c->name() << '\t' << t << '\t' << erle << '\n';
                report["results"].push_back({{"scenario", s.name}, {"canceller", c->name()},
                                             {"steadyErleDb", figure(f.steadyErleDb)},
                                             {"steadyMicOverOutDb", figure(f.steadyMicOverOutDb)},
                                             {"timeTo10dB", figure(f.timeTo10dB)}, {"timeTo20dB", figure(f.timeTo20dB)},
                                             {"reconvergeTo20dB", figure(f.reconvergeTo20dB)},
                                             {"minErleDb", figure(f.minErleDb)}, {"doubleTalkSnrDb", figure(f.doubleTalkSnrDb)},
                                             {"nearAloneLossDb", figure(f.nearAloneLossDb)},
                                             {"nearSnrFitDb", figure(f.nearSnrFitDb)},
                                             {"loudestFrameDb", figure(f.loudestFrameDb)},
                                             {"loudestFrameSeconds", figure(f.loudestFrameSeconds)},
                                             {"loudestAfterChangeDb", figure(f.loudestAfterChangeDb)},
                                             {"reinitialisations", figure(reinit)},
                                             {"realTimeFactor", figure(took / seconds)}});
                if (c->name() == "quell") {
                    quellDelay = c->lastDelayFoundMs();
                    quellReinits = reinits;
                }
            }
            const std::vector<ScenarioResult> scenarioResults(results.begin() + static_cast<std::ptrdiff_t>(first), results.end());
            if (check)
                checkTargets(s.name, scenarioResults, quellDelay, s.bulkDelayMs, quellReinits, quellEarlier, failures,
                             profile.value_or(quell::aec::cpuOnly(qo.settings.filter) ? TargetProfile::RealtimeCpu
                                                                                          : TargetProfile::CiRls));
            for (const ScenarioResult& r : scenarioResults)
                if (r.canceller == "quell")
                    quellEarlier[s.name] = r.figures;
        }
    } catch (const std::exception& e) {
        std::cerr << "quell-eval: " << e.what() << "\n";
        return 2;
    }
    report["cancellers"] = nlohmann::ordered_json::array();
    for (const auto& c : cancellers)
        report["cancellers"].push_back({{"name", c->name()}, {"description", c->description()}});

    std::cout << "\ncolumns: erle_db = echo / (out - near - noise) over far-end single talk after 1 s (and 1 s after "
                 "a path change);\n  mic/out = mic / out power there; t10_s, t20_s = from echo start to 3 frames (50 ms) "
                 "in a row at 10 / 20 dB;\n  reconv = path change to 3 frames in a row at 20 dB; min_erle = worst steady "
                 "frame; dt_snr = near end SNR of the output in double talk above 300 Hz;\n  alone_l = SNR lost by a lone "
                 "near end above 300 Hz;\n  nsnr_fit = near-end SNR after a 64-tap linear fit (above 300 Hz, where the near end "
                 "talks); loud_db = loudest 100 ms output frame over the mic's after 1 s\n  (loud_ch: within 0.5 s after a path "
                 "change); reinit = Quell's covariance re-initialisations; x_rt = run time / signal time on this machine;\n  delay_ms = far-end delay Quell found at the end (its estimate less a 4 ms margin: the delay it applied, and the\n  echo's lag within the filter's taps where a long filter covers it without realigning)\n";
    for (const auto& c : cancellers)
        std::cout << "  " << c->name() << ": " << c->description() << "\n";
    if (!markdownPath.empty() && !(std::ofstream(markdownPath) << comparisonMarkdown(results))) {
        std::cerr << "quell-eval: cannot write " << markdownPath << "\n";
        return 2;
    }
    if (!jsonPath.empty()) {
        std::ofstream file(jsonPath);
        if (!(file << report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n") || !(file.flush())) {
            std::cerr << "quell-eval: cannot write " << jsonPath << "\n";
            return 2;
        }
    }
    if (check) {
        for (const auto& f : failures)
            std::cout << "TARGET MISSED: " << f << "\n";
        std::cout << (failures.empty() ? "all asserted targets met\n" : "asserted targets missed\n");
        return failures.empty() ? 0 : 1;
    }
    return 0;
}
