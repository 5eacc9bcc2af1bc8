// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
#include <string>
#include <string_view>

namespace quell::aec {

// Where the adaptive filter runs. Auto: the GPU when one is usable, else the CPU (and say so).
enum class Backend { Auto, Cpu, Gpu };

// The backend named by `text` ("cpu", "gpu" or "auto"); otherwise std::invalid_argument naming `option`
// (where the name came from: a command-line option, a PipeWire argument) and the choices.
Backend parseBackend(std::string_view option, std::string_view text);
const char* toString(Backend backend);

} // namespace quell::aec
