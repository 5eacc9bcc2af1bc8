// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The comparison in one Markdown table: a row per scenario, Quell's figure beside the best peer's (the
// highest ERLE and near-end SNR after the linear fit, the shortest times, the smallest loss of a lone near
// end), the peer named, and bold where Quell is at least as good; the loudest output frame over the
// microphone's beside the loudest of the peers', bold where Quell keeps within 1 dB. quell-eval
// --markdown writes it.
#include <optional>
#include <string>
#include <vector>

#include "eval/EchoMetrics.h"

namespace quell::eval {

struct ScenarioResult {
    std::string scenario;
    std::string canceller;
    EchoFigures figures;
    std::optional<double> delayMs;   // Quell only: the far-end delay applied at the end
};

// `quell` names Quell's rows; every other canceller is a peer.
std::string comparisonMarkdown(const std::vector<ScenarioResult>& results, const std::string& quell = "quell");

} // namespace quell::eval
