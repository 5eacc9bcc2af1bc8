// SPDX-License-Identifier: GPL-3.0-or-later
#include "aec/Backend.h"

#include <stdexcept>
#include <string>

namespace quell::aec {

Backend parseBackend(std::string_view option, std::string_view text)
{
    if (text == "auto") return Backend::Auto;
    if (text == "cpu") return Backend::Cpu;
    if (text == "gpu") return Backend::Gpu;
    throw std::invalid_argument(std::string(option) + ": expected cpu, gpu or auto, got '" + std::string(text) + "'");
}

const char* toString(Backend backend)
{
    switch (backend) {
    case Backend::Cpu: return "cpu";
    case Backend::Gpu: return "gpu";
    case Backend::Auto: break;
    }
    return "auto";
}

} // namespace quell::aec
