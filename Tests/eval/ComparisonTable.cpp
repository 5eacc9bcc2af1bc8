// SPDX-License-Identifier: GPL-3.0-or-later
#include "eval/ComparisonTable.h"

#include <map>
#include <sstream>

namespace quell::eval {

namespace {

using Figure = std::optional<double> EchoFigures::*;

// "q / p (peer)" with q in bold when it is at least as good as the best peer's p. Quell reaching a time
// the peers never reach counts as better; a figure Quell lacks where a peer has one as worse.
std::string cell(const ScenarioResult& q, const std::vector<const ScenarioResult*>& peers, Figure figure, bool higherIsBetter,
                 int precision)
{
    const ScenarioResult* best = nullptr;
    for (const ScenarioResult* p : peers) {
        const auto& v = p->figures.*figure;
        if (!v)
            continue;
        const auto& b = best ? best->figures.*figure : std::optional<double>();
        if (!b || (higherIsBetter ? *v > *b : *v < *b))
            best = p;
    }
    const auto& mine = q.figures.*figure;
    if (!mine && !best)
        return "-";
    const std::optional<double> theirs = best ? best->figures.*figure : std::nullopt;
    const bool win = mine && (!theirs || (higherIsBetter ? *mine >= *theirs - 0.05 : *mine <= *theirs + 0.005));
    std::string s = win ? "**" + formatFigure(mine, precision) + "**" : formatFigure(mine, precision);
    s += " / " + formatFigure(theirs, precision);
    if (best)
        s += " (" + best->canceller + ")";
    return s;
}

// The loudest output frame over the microphone's: Quell's, bold where it keeps the 1 dB limit, beside the
// loudest of the peers' (named).
std::string loudestCell(const ScenarioResult& q, const std::vector<const ScenarioResult*>& peers)
{
    const ScenarioResult* loudest = nullptr;
    for (const ScenarioResult* p : peers)
        if (p->figures.loudestFrameDb && (!loudest || *p->figures.loudestFrameDb > *loudest->figures.loudestFrameDb))
            loudest = p;
    const auto& mine = q.figures.loudestFrameDb;
    std::string s = mine && *mine <= 1.0 ? "**" + formatFigure(mine) + "**" : formatFigure(mine);
    s += " / " + formatFigure(loudest ? loudest->figures.loudestFrameDb : std::nullopt);
    if (loudest)
        s += " (" + loudest->canceller + ")";
    return s;
}

} // namespace

std::string comparisonMarkdown(const std::vector<ScenarioResult>& results, const std::string& quell)
{
    std::vector<std::string> order;
    std::map<std::string, std::vector<const ScenarioResult*>> byScenario;
    for (const ScenarioResult& r : results) {
        if (byScenario.find(r.scenario) == byScenario.end())
            order.push_back(r.scenario);
        byScenario[r.scenario].push_back(&r);
    }
    std::ostringstream md;
    md << "| scenario | ERLE dB | t20 s | reconv s | near SNR (fit) dB | loudest frame dB | alone loss dB | delay ms |\n"
          "|---|---|---|---|---|---|---|---|\n";
    for (const std::string& name : order) {
        const ScenarioResult* q = nullptr;
        std::vector<const ScenarioResult*> peers;
        for (const ScenarioResult* r : byScenario[name]) {
            if (r->canceller == quell)
                q = r;
            else
                peers.push_back(r);
        }
        if (!q)
            continue;
        md << "| " << name << " | " << cell(*q, peers, &EchoFigures::steadyErleDb, true, 1) << " | "
           << cell(*q, peers, &EchoFigures::timeTo20dB, false, 2) << " | "
           << cell(*q, peers, &EchoFigures::reconvergeTo20dB, false, 2) << " | "
           << cell(*q, peers, &EchoFigures::nearSnrFitDb, true, 1) << " | "
           << loudestCell(*q, peers) << " | "
           << cell(*q, peers, &EchoFigures::nearAloneLossDb, false, 1) << " | " << formatFigure(q->delayMs, 1) << " |\n";
    }
    return md.str();
}

} // namespace quell::eval
