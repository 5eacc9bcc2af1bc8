// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One corpus scenario as quell-eval sees it: the separate components (Tests/corpus writes them so the
// metrics are exact) and the intervals from scenario.json.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace quell::eval {

using Intervals = std::vector<std::pair<double, double>>;   // [start, end) in seconds

struct CorpusScenario {
    std::string name;
    int sampleRate = 16000;
    std::vector<std::vector<float>> ref;   // one vector per loudspeaker
    // Microphone 1 only: quell-eval evaluates the first mic of multi-mic scenarios.
    std::vector<float> mic, near, echo, noise;
    std::optional<double> pathChangeSeconds;
    double bulkDelayMs = 0.0;
    Intervals farActive, echoActive, nearActive, doubleTalk;
    bool nearEndOnly() const { return echoActive.empty() && !nearActive.empty(); }
};

// Scenario directories listed in <corpus>/manifest.tsv (first column after the header), in order.
std::vector<std::filesystem::path> listScenarios(const std::filesystem::path& corpusDir);

// Throws std::runtime_error on missing or malformed files.
CorpusScenario loadScenario(const std::filesystem::path& scenarioDir);

} // namespace quell::eval
