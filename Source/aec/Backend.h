// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace quell::aec {

// Where the adaptive filter runs. Auto: the GPU when one is usable, else the CPU (and say so).
enum class Backend { Auto, Cpu, Gpu };

std::optional<Backend> parseBackend(std::string_view text);
const char* toString(Backend backend);

} // namespace quell::aec
