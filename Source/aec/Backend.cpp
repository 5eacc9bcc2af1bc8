// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/Backend.h"

#include "io/NamedChoice.h"

namespace quell::aec {
namespace {

constexpr std::array<io::NamedChoice<Backend>, 3> kBackends{
    {{Backend::Cpu, "cpu"}, {Backend::Gpu, "gpu"}, {Backend::Auto, "auto"}}};

} // namespace

Backend parseBackend(std::string_view option, std::string_view text) { return io::parseChoice(kBackends, option, text); }

const char* toString(Backend backend) { return io::nameOf(kBackends, backend); }

} // namespace quell::aec
