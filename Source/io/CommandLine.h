// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Small helpers for the command-line front ends: option values parsed strictly, with messages that
// name the option and the accepted range.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace quell::io {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// For a program's catch (...): prints the current exception as "program: message" on stderr and returns
// the exit code: 2 for bad usage or bad input (UsageError, FileError, std::invalid_argument), 1 for any
// other failure ("program: failed: message").
int reportCurrentException(const char* program) noexcept;

// Walks a command line as users expect of one: "--opt value" and "--opt=value"; "--" ends the options
// (these programs take no other arguments, so anything after it is an error); a flag given "=value" is
// an error. Errors are UsageError naming the option.
class Arguments {
public:
    Arguments(int argc, const char* const* argv) : argv_(argv + 1, argv + std::max(argc, 1)) {}
    // Advances to the next option; false at the end.
    bool next();
    const std::string& option() const { return option_; }
    // The option's value: after '=', or the next argument.
    std::string value();

private:
    std::vector<std::string> argv_;
    std::size_t at_ = 0;
    std::string option_, inline_;
    bool hasInline_ = false, inlineTaken_ = false;
};

int parseInt(const std::string& option, const std::string& text, int lo, int hi);
double parseDouble(const std::string& option, const std::string& text, double lo, double hi);

} // namespace quell::io
