// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A one-line progress bar on a terminal. Silent when the stream is not a terminal (piped, CI logs),
// so logs are not filled with carriage returns.
#include <chrono>
#include <cstdio>
#include <string>

namespace quell::io {

class ProgressBar {
public:
    // Draws on `stream` only if it is a terminal.
    ProgressBar(std::FILE* stream, std::string label);
    ~ProgressBar();
    void update(double fraction);
    void finish();
    bool enabled() const { return enabled_; }

private:
    std::FILE* stream_;
    std::string label_;
    bool enabled_;
    bool finished_ = false;
    int lastPermille_ = -1;
    std::chrono::steady_clock::time_point start_;
};

} // namespace quell::io
