// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A closed set of values and their spellings (an enum read from a command line, a PipeWire argument or
// a file), so that parsing, naming and the error that lists the choices are written once.
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace quell::io {

template <typename E>
struct NamedChoice {
    E value;
    const char* name;
};

// The value spelled `text`; otherwise std::invalid_argument "OPTION: expected a, b or c, got 'TEXT'"
// (`option` says where the text came from; the choices in the table's order).
template <typename E, std::size_t N>
E parseChoice(const std::array<NamedChoice<E>, N>& choices, std::string_view option, std::string_view text)
{
    static_assert(N >= 2);
    for (const auto& c : choices)
        if (text == c.name)
            return c.value;
    std::string expected;
    for (std::size_t i = 0; i < N; ++i)
        expected += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(choices[i].name);
    throw std::invalid_argument(std::string(option) + ": expected " + expected + ", got '" + std::string(text) + "'");
}

// The spelling of `value` (the first entry's if the table lacks it, which a complete table never does).
template <typename E, std::size_t N>
const char* nameOf(const std::array<NamedChoice<E>, N>& choices, E value)
{
    for (const auto& c : choices)
        if (c.value == value)
            return c.name;
    return choices[0].name;
}

} // namespace quell::io
