// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Small helpers for the command-line front ends: option values parsed strictly, with messages that
// name the option and the accepted range.
#include <stdexcept>
#include <string>

namespace quell::io {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// For a program's catch (...): prints the current exception as "program: message" on stderr and returns
// the exit code: 2 for bad usage or bad input (UsageError, FileError, std::invalid_argument), 1 for any
// other failure ("program: failed: message").
int reportCurrentException(const char* program) noexcept;

int parseInt(const std::string& option, const std::string& text, int lo, int hi);
double parseDouble(const std::string& option, const std::string& text, double lo, double hi);

} // namespace quell::io
