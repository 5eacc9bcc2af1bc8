// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FilterKind.h"

namespace quell::aec {

std::optional<FilterKind> parseFilterKind(std::string_view text)
{
    if (text == "auto") return FilterKind::Auto;
    if (text == "rls") return FilterKind::Rls;
    if (text == "kalman") return FilterKind::Kalman;
    return std::nullopt;
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
