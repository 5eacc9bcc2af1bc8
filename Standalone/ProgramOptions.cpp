// SPDX-License-Identifier: GPL-3.0-or-later
#include "ProgramOptions.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <utility>

#include "QuellRevision.h"
#include "io/CommandLine.h"

namespace quell::standalone {
namespace {

// --help as the programs have always printed it: their own usage lines, then the groups of options with
// the values at column 20, then the notes.
class UsageFormatter final : public CLI::Formatter {
public:
    explicit UsageFormatter(std::string usage) : usage_(std::move(usage)) { column_width(20); }
    std::string make_usage(const CLI::App*, std::string) const override { return usage_ + "\n\n"; }
    // One blank line between the groups (CLI11 puts two).
    std::string make_group(std::string group, bool positional, std::vector<const CLI::Option*> opts) const override
    {
        std::string out = group + ":\n";
        for (const CLI::Option* opt : opts)
            out += make_option(opt, positional);
        return out;
    }
    std::string make_option_opts(const CLI::Option* opt) const override
    {
        return opt->get_option_text().empty() ? std::string() : " " + opt->get_option_text();
    }

private:
    std::string usage_;
};

// CLI11 names a flag by its long name without the dashes in some messages.
std::string dashed(std::string name)
{
    return name.rfind("-", 0) == 0 ? name : "--" + name;
}

} // namespace

ProgramOptions::ProgramOptions(std::string program, std::string usage, std::string version)
    : app_(std::make_unique<CLI::App>("", std::move(program))), version_(std::move(version))
{
    app_->formatter(std::make_shared<UsageFormatter>(std::move(usage)));
    app_->set_help_flag("-h,--help", "print this help and exit");
    if (!version_.empty())
        app_->add_flag("--version")->description("print the version and exit")->group(group_);
    // What CLI11 does not take as an option is collected and refused by parse() in this project's words.
    app_->allow_extras();
    app_->option_defaults()->disable_flag_override()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

ProgramOptions::~ProgramOptions() = default;

std::string ProgramOptions::versionLine(const std::string& program)
{
    return program + " " + QUELL_VERSION + " (git " + QUELL_REVISION + ")";
}

void ProgramOptions::group(const std::string& heading) { group_ = heading; }

void ProgramOptions::option(const std::string& name, const std::string& valueName, const std::string& help,
                            std::function<void(const std::string&)> take)
{
    app_->add_option_function<std::string>(name, std::move(take), help)
        ->option_text(valueName)
        ->group(group_)
        ->allow_extra_args(false);
}

void ProgramOptions::text(const std::string& name, const std::string& valueName, std::string& target, const std::string& help)
{
    option(name, valueName, help, [&target](const std::string& v) { target = v; });
}

void ProgramOptions::integer(const std::string& name, const std::string& valueName, int& target, int lo, int hi,
                             const std::string& help)
{
    option(name, valueName, help, [&target, name, lo, hi](const std::string& v) { target = io::parseInt(name, v, lo, hi); });
}

void ProgramOptions::number(const std::string& name, const std::string& valueName, double& target, double lo, double hi,
                            const std::string& help)
{
    option(name, valueName, help, [&target, name, lo, hi](const std::string& v) { target = io::parseDouble(name, v, lo, hi); });
}

void ProgramOptions::flag(const std::string& name, const std::string& help, std::function<void()> act)
{
    app_->add_flag_callback(name, std::move(act), help)->group(group_);
}

void ProgramOptions::flag(const std::string& name, bool& target, const std::string& help)
{
    flag(name, help, [&target] { target = true; });
}

void ProgramOptions::notes(const std::string& text) { app_->footer(text); }

std::string ProgramOptions::help() const { return app_->help(); }

bool ProgramOptions::parse(int argc, const char* const* argv)
{
    try {
        app_->parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::fputs(help().c_str(), stdout);
        return false;
    } catch (const CLI::ArgumentMismatch& e) {
        // A flag given a value, or an option without one: CLI11's message names it without its dashes.
        const std::string what = e.what();
        if (const std::size_t at = what.find(" was given a disallowed flag override"); at != std::string::npos)
            throw io::UsageError(dashed(what.substr(0, at)) + " takes no value");
        if (const std::size_t at = what.find(": "); at != std::string::npos && what.find(" missing", at) != std::string::npos)
            throw io::UsageError(what.substr(0, at) + ": missing value");
        throw io::UsageError(what);
    } catch (const CLI::ParseError& e) {
        throw io::UsageError(e.what());
    }
    if (!version_.empty() && app_->count("--version") > 0) {
        std::printf("%s\n", version_.c_str());
        return false;
    }
    std::vector<std::string> extras = app_->remaining();
    // "--" ends the options; CLI11 hands it back with what follows it.
    const bool afterDashes = !extras.empty() && extras.front() == "--";
    if (afterDashes)
        extras.erase(extras.begin());
    if (!extras.empty()) {
        const std::string& first = extras.front();
        if (afterDashes)
            throw io::UsageError("unexpected argument '" + first + "' after -- (the options take no other arguments)");
        if (first.rfind("-", 0) == 0 && first != "-")
            throw io::UsageError("unknown option '" + first.substr(0, first.find('=')) + "' (see --help)");
        throw io::UsageError("unexpected argument '" + first + "': the options take no other arguments (see --help)");
    }
    return true;
}

} // namespace quell::standalone
