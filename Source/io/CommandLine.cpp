// SPDX-License-Identifier: GPL-3.0-or-later
#include "io/CommandLine.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "io/WavFile.h"

namespace quell::io {

ExceptionReport describeCurrentException() noexcept
{
    try {
        throw;
    } catch (const UsageError& e) {
        return {2, e.what()};
    } catch (const FileError& e) {
        return {2, e.what()};
    } catch (const std::invalid_argument& e) {
        return {2, e.what()};
    } catch (const std::exception& e) {
        return {1, std::string("failed: ") + e.what()};
    } catch (...) {
        return {1, "failed with an unknown error"};
    }
}

int reportCurrentException(const char* program) noexcept
{
    const ExceptionReport report = describeCurrentException();
    std::fprintf(stderr, "%s: %s\n", program, report.message.c_str());
    return report.exitCode;
}

int parseInt(const std::string& option, const std::string& text, int lo, int hi)
{
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
        throw UsageError(option + ": expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi)
                         + ", got '" + text + "'");
    return static_cast<int>(v);
}

double parseDouble(const std::string& option, const std::string& text, double lo, double hi)
{
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v < lo || v > hi) {
        char range[96];
        std::snprintf(range, sizeof range, "a number from %g to %g", lo, hi);
        throw UsageError(option + ": expected " + range + ", got '" + text + "'");
    }
    return v;
}

} // namespace quell::io

