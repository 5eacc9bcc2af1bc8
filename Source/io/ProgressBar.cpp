// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/ProgressBar.h"

#include <unistd.h>

#include <algorithm>

namespace quell::io {

ProgressBar::ProgressBar(std::FILE* stream, std::string label)
    : stream_(stream), label_(std::move(label)), enabled_(::isatty(::fileno(stream)) != 0),
      start_(std::chrono::steady_clock::now())
{
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(double fraction)
{
    if (!enabled_ || finished_)
        return;
    fraction = std::clamp(fraction, 0.0, 1.0);
    const int permille = static_cast<int>(fraction * 1000.0);
    if (permille == lastPermille_)
        return;
    lastPermille_ = permille;
    constexpr int width = 30;
    const int filled = static_cast<int>(fraction * width);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.append(static_cast<std::size_t>(width - filled), '.');
    if (fraction > 0.02) {
        const double eta = elapsed * (1.0 - fraction) / fraction;
        std::fprintf(stream_, "\r%s [%s] %5.1f%%  eta %4.0f s ", label_.c_str(), bar.c_str(), fraction * 100.0, eta);
    } else {
        std::fprintf(stream_, "\r%s [%s] %5.1f%%           ", label_.c_str(), bar.c_str(), fraction * 100.0);
    }
    std::fflush(stream_);
}

void ProgressBar::finish()
{
    if (!enabled_ || finished_)
        return;
    finished_ = true;
    std::fprintf(stream_, "\r\033[K");
    std::fflush(stream_);
}

} // namespace quell::io
