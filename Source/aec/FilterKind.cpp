// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/FilterKind.h"

#include "io/NamedChoice.h"

namespace quell::aec {
namespace {

constexpr std::array<io::NamedChoice<FilterKind>, 4> kFilterKinds{
    {{FilterKind::Rls, "rls"}, {FilterKind::Kalman, "kalman"}, {FilterKind::Nlms, "nlms"}, {FilterKind::Auto, "auto"}}};

} // namespace

FilterKind parseFilterKind(std::string_view option, std::string_view text)
{
    return io::parseChoice(kFilterKinds, option, text);
}

const char* toString(FilterKind kind) { return io::nameOf(kFilterKinds, kind); }

} // namespace quell::aec
