#include "eval/AssertedTargets.h"

#include <cstdio>

namespace quell::eval {
namespace {

void atLeast(const std::string& scenario, const char* what, const std::optional<double>& v, double target,
             std::vector<std::string>& failures)
{
    if (!v || *v < target) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s: %s %s < %.2f", scenario.c_str(), what,
                      v ? std::to_string(*v).c_str() : "(never)", target);
        failures.emplace_back(buf);
    }
}

void atMost(const std::string& scenario, const char* what, const std::optional<double>& v, double target,
            std::vector<std::string>& failures)
{
    if (!v || *v > target) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s: %s %s > %.2f", scenario.c_str(), what,
                      v ? std::to_string(*v).c_str() : "(never)", target);
        failures.emplace_back(buf);
    }
}

} // namespace

void checkTargets(const std::string& scenario, const EchoFigures& f, double alignedDelayMs, double bulkDelayMs,
                  std::vector<std::string>& failures)
{
    auto is = [&](const char* prefix) { return scenario.rfind(prefix, 0) == 0; };
    // No divergence anywhere: no steady single-talk frame worse than the microphone itself.
    if (f.minErleDb)
        atLeast(scenario, "worst steady frame ERLE (dB)", f.minErleDb, 0.0, failures);
    // Speech, linear echo, 30 dB ENR, no delay: issue 7's numbers.
    if (is("speech-rt200-enr30") || scenario == "speech-rt300-enr30-dt") {
        atLeast(scenario, "steady-state ERLE (dB)", f.steadyErleDb, 40.0, failures);
        atMost(scenario, "time to 20 dB ERLE (s)", f.timeTo20dB, 0.2, failures);
    }
    if (scenario == "speech-rt300-enr30-dt")
        atLeast(scenario, "near-end SNR in double talk above 300 Hz (dB)", f.doubleTalkSnrDb, 20.0, failures);
    if (is("near-only"))
        atMost(scenario, "near-end-alone SNR loss (dB)", f.nearAloneLossDb, 3.0, failures);
    // Bulk delays are found: the applied delay is the bulk delay plus the direct path (0.5 to 3 ms) less
    // the 4 ms margin, at 0.25 ms resolution.
    if (bulkDelayMs > 0.0) {
        atLeast(scenario, "applied far-end delay (ms)", alignedDelayMs, bulkDelayMs - 4.5, failures);
        atMost(scenario, "applied far-end delay (ms)", alignedDelayMs, bulkDelayMs + 0.5, failures);
    }
}

} // namespace quell::eval
