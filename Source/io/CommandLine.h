// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Helpers for the front ends: option values parsed strictly, with messages that name the option and the
// accepted range, and one way to turn an exception into a message and an exit code.
#include <stdexcept>
#include <string>

namespace quell::io {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The current exception (call from a catch block) as the programs report it: exit code 2 and its own
// text for bad usage or bad input (UsageError, FileError, std::invalid_argument), 1 and "failed: text"
// for any other failure.
struct ExceptionReport {
    int exitCode = 1;
    std::string message;
};
ExceptionReport describeCurrentException() noexcept;

// For a program's catch (...): prints describeCurrentException() as "program: message" on stderr and
// returns its exit code.
int reportCurrentException(const char* program) noexcept;

// A number from an option's text, checked against the range [lo, hi]; otherwise io::UsageError naming
// the option and the range ("--taps: expected an integer from 8 to 8192, got '5x'"). The programs' command
// lines (Standalone/ProgramOptions.h) and the PipeWire backend's properties read their numbers with these.
int parseInt(const std::string& option, const std::string& text, int lo, int hi);
double parseDouble(const std::string& option, const std::string& text, double lo, double hi);

} // namespace quell::io
