// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// One command-line layer for every Quell program (quell-render, quell-live, quell-eval, quell-corpus,
// quell-bench), on CLI11 (Debian's libcli11-dev), with the conventions they all keep:
//  - "--opt value" and "--opt=value"; "--" ends the options (no program takes anything else, so an
//    argument after it, or any argument that is not an option, is an error);
//  - numbers checked against the option's range, the range in the message ("--taps: expected an integer
//    from 8 to 8192, got '5x'"); a flag given "=value" is an error;
//  - --help: the program's usage lines, its options in groups with their help (values at column 20), then
//    its notes; --version: "program VERSION (git REVISION)";
//  - every mistake is one io::UsageError naming the option, which io::reportCurrentException turns into
//    "program: message" and exit code 2.
// CLI11 parses; the programs' own parsers (io::parseInt, the enums' NamedChoice) read the values, so the
// messages are the same whichever program takes the option.
// Threading: construct, define and parse on one thread, before the program starts its work.
#include <functional>
#include <memory>
#include <string>

namespace CLI {
class App;
class Option;
}

namespace quell::standalone {

class ProgramOptions {
public:
    // usage: the lines --help prints first ("usage: quell-render --mic MIC.wav ..."); version: the text
    // --version prints (empty: the program has no --version).
    ProgramOptions(std::string program, std::string usage, std::string version);
    // Every program's --version text: "program VERSION (git REVISION)".
    static std::string versionLine(const std::string& program);
    ~ProgramOptions();
    ProgramOptions(const ProgramOptions&) = delete;
    ProgramOptions& operator=(const ProgramOptions&) = delete;

    // The options defined after this appear under `heading` in --help ("Options" until the first call).
    void group(const std::string& heading);
    // An option with a value, read by `take` (which throws io::UsageError, or std::invalid_argument, naming
    // the option, on a bad value). valueName: how --help shows the value ("N", "FILE.wav").
    void option(const std::string& name, const std::string& valueName, const std::string& help,
                std::function<void(const std::string&)> take);
    void text(const std::string& name, const std::string& valueName, std::string& target, const std::string& help);
    void integer(const std::string& name, const std::string& valueName, int& target, int lo, int hi, const std::string& help);
    void number(const std::string& name, const std::string& valueName, double& target, double lo, double hi,
                const std::string& help);
    // A flag (no value): `act` runs when it is given.
    void flag(const std::string& name, const std::string& help, std::function<void()> act);
    void flag(const std::string& name, bool& target, const std::string& help);
    // Text after the options in --help (exit codes, formats).
    void notes(const std::string& text);

    // Parses the command line. False when it asked for --help or --version, which have been printed to
    // standard output (the program exits 0); throws io::UsageError on any mistake.
    bool parse(int argc, const char* const* argv);
    std::string help() const;

private:
    std::unique_ptr<CLI::App> app_;
    std::string group_ = "Options";
    std::string version_;
};

} // namespace quell::standalone
