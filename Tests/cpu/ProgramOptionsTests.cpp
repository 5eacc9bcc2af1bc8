// SPDX-License-Identifier: GPL-3.0-or-later
// The command-line layer every program uses (Standalone/ProgramOptions, on CLI11): "--opt value" and
// "--opt=value", "--" ending the options, numbers checked with the range in the message, flags that take
// no value, one line per mistake naming the option, --help listing every option, and the canceller's
// options as quell-render, quell-live and quell-eval share them.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "CancellerOptions.h"
#include "ProgramOptions.h"
#include "aec/EchoCancellerSettings.h"
#include "io/CommandLine.h"

using namespace quell;

namespace {

struct Parsed {
    std::string file;
    int count = 3;
    double gain = 0.5;
    bool loud = false;
    bool answered = false;   // parse() returned false: --help or --version
};

// Parses `args` (after the program's name) with a small program's options; the error text, or "" on success.
std::string run(std::vector<std::string> args, Parsed& p)
{
    standalone::ProgramOptions cli("prog", "usage: prog [options]", "prog 1.2.3 (git abc)");
    cli.text("--file", "F", p.file, "a file");
    cli.integer("--count", "N", p.count, 1, 10, "how many");
    cli.number("--gain", "G", p.gain, 0.0, 1.0, "how much");
    cli.flag("--loud", p.loud, "louder");
    std::vector<const char*> argv{"prog"};
    for (const auto& a : args)
        argv.push_back(a.c_str());
    try {
        p.answered = !cli.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const io::UsageError& e) {
        return e.what();
    }
    return "";
}

std::string fails(std::vector<std::string> args)
{
    Parsed p;
    return run(std::move(args), p);
}

} // namespace

TEST_CASE("ProgramOptions takes --opt value, --opt=value and flags, the last of a repeated option", "[cli]")
{
    Parsed p;
    REQUIRE(run({"--file", "a.wav", "--count=7", "--gain", "0.25", "--loud"}, p).empty());
    CHECK(p.file == "a.wav");
    CHECK(p.count == 7);
    CHECK(p.gain == 0.25);
    CHECK(p.loud);
    CHECK_FALSE(p.answered);

    Parsed q;
    REQUIRE(run({"--count", "2", "--count", "9", "--file=-"}, q).empty());
    CHECK(q.count == 9);
    CHECK(q.file == "-");   // '-' is a value (standard input), not an option
    CHECK_FALSE(q.loud);

    Parsed r;
    REQUIRE(run({"--loud", "--"}, r).empty());   // "--" with nothing after it ends the options
    CHECK(r.loud);
}

TEST_CASE("ProgramOptions refuses every mistake with one line naming the option", "[cli]")
{
    CHECK(fails({"--count", "11"}) == "--count: expected an integer from 1 to 10, got '11'");
    CHECK(fails({"--count", "5x"}) == "--count: expected an integer from 1 to 10, got '5x'");
    CHECK(fails({"--count=abc"}) == "--count: expected an integer from 1 to 10, got 'abc'");
    CHECK(fails({"--gain", "2"}) == "--gain: expected a number from 0 to 1, got '2'");
    CHECK(fails({"--gain", "nan"}) == "--gain: expected a number from 0 to 1, got 'nan'");
    CHECK(fails({"--count"}) == "--count: missing value");
    CHECK(fails({"--count="}) == "--count: missing value");
    CHECK(fails({"--loud=yes"}) == "--loud takes no value");
    CHECK(fails({"--loudest"}) == "unknown option '--loudest' (see --help)");
    CHECK(fails({"--nope=3"}) == "unknown option '--nope' (see --help)");
    CHECK(fails({"stray"}) == "unexpected argument 'stray': the options take no other arguments (see --help)");
    CHECK(fails({"--loud", "--", "extra"}) == "unexpected argument 'extra' after -- (the options take no other arguments)");
    // A mistake stops the parse: nothing after it is half-applied and reported as fine.
    Parsed p;
    CHECK_FALSE(run({"--count", "0", "--loud"}, p).empty());
}

TEST_CASE("ProgramOptions answers --help and --version and lists every option with its help", "[cli]")
{
    Parsed p;
    REQUIRE(run({"--version"}, p).empty());
    CHECK(p.answered);
    Parsed q;
    REQUIRE(run({"--help"}, q).empty());
    CHECK(q.answered);

    standalone::ProgramOptions cli("prog", "usage: prog --x N", "prog 1 (git abc)");
    aec::EchoCancellerSettings s;
    int x = 0;
    cli.integer("--x", "N", x, 0, 9, "the x");
    cli.group("Canceller options");
    standalone::addCancellerOptions(cli, s, standalone::CancellerUse::Offline);
    cli.notes("Exit codes: 0 done.");
    const std::string help = cli.help();
    CHECK(help.rfind("usage: prog --x N\n\nOptions:\n", 0) == 0);
    CHECK_THAT(help, Catch::Contains("  --x N             the x\n"));   // values at column 20
    CHECK_THAT(help, Catch::Contains("\nCanceller options:\n"));
    for (const char* option : {"--help", "--version", "--taps N", "--lambda L", "--backend B", "--filter F", "--suppression DB",
                               "--no-comfort-noise", "--distortion-model"})
        CHECK_THAT(help, Catch::Contains(option));
    CHECK_THAT(help, Catch::EndsWith("Exit codes: 0 done.\n"));
}

TEST_CASE("The canceller's options read into the settings with their ranges", "[cli]")
{
    auto parse = [](std::vector<std::string> args, aec::EchoCancellerSettings& s) -> std::string {
        standalone::ProgramOptions cli("prog", "usage: prog", "");
        standalone::addCancellerOptions(cli, s, standalone::CancellerUse::Realtime);
        std::vector<const char*> argv{"prog"};
        for (const auto& a : args)
            argv.push_back(a.c_str());
        try {
            cli.parse(static_cast<int>(argv.size()), argv.data());
        } catch (const std::exception& e) {
            return e.what();
        }
        return "";
    };
    aec::EchoCancellerSettings s;
    REQUIRE(parse({"--taps=2048", "--lambda", "0.9999", "--backend", "cpu", "--filter", "kalman", "--suppression", "0",
                   "--no-comfort-noise", "--distortion-model"},
                  s)
                .empty());
    CHECK(s.taps == 2048);
    CHECK(s.lambda == 0.9999);
    CHECK(s.backend == aec::Backend::Cpu);
    CHECK(s.filter == aec::FilterKind::Kalman);
    CHECK_FALSE(s.suppressor.enabled);
    CHECK_FALSE(s.suppressor.comfortNoise);
    CHECK(s.distortionFilter);

    aec::EchoCancellerSettings automatic;
    automatic.taps = 512;
    REQUIRE(parse({"--taps", "auto", "--lambda", "auto"}, automatic).empty());
    CHECK(automatic.taps == 0);
    CHECK(automatic.lambda == 0.0);

    aec::EchoCancellerSettings bad;
    CHECK(parse({"--taps", "7"}, bad) == "--taps: expected an integer from 8 to 8192, got '7'");
    CHECK(parse({"--lambda", "1.5"}, bad) == "--lambda: expected a number from 0.9 to 1, got '1.5'");
    CHECK(parse({"--suppression", "61"}, bad) == "--suppression: expected a number from 0 to 60, got '61'");
    CHECK(parse({"--backend", "tpu"}, bad) == "--backend: expected cpu, gpu or auto, got 'tpu'");
    CHECK(parse({"--help"}, bad).empty());
    CHECK(parse({"--version"}, bad) == "unknown option '--version' (see --help)");   // no version given: no --version
}
