// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FilterKind.h"

#include <stdexcept>
#include <string>

namespace quell::aec {

FilterKind parseFilterKind(std::string_view option, std::string_view text)
{
    if (text == "auto") return FilterKind::Auto;
    if (text == "rls") return FilterKind::Rls;
    if (text == "kalman") return FilterKind::Kalman;
    throw std::invalid_argument(std::string(option) + ": expected rls, kalman or auto, got '" + std::string(text) + "'");
}

const char* toString(FilterKind kind)
{
    switch (kind) {
    case FilterKind::Rls: return "rls";
    case FilterKind::Kalman: return "kalman";
    case FilterKind::Auto: break;
    }
    return "auto";
}

} // namespace quell::aec
