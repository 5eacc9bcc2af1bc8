// SPDX-License-Identifier: GPL-3.0-or-later
// NamedChoice and the enums spelled with it: every spelling parses to its value and back, anything else
// is refused with the option's name, the choices in order and the text that was given.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "aec/Backend.h"
#include "aec/FilterKind.h"
#include "io/NamedChoice.h"

using namespace quell;

namespace {

enum class Colour { Red, Green, Blue, Unlisted };
constexpr std::array<io::NamedChoice<Colour>, 3> kColours{
    {{Colour::Red, "red"}, {Colour::Green, "green"}, {Colour::Blue, "blue"}}};

std::string refusal(auto&& parse)
{
    try {
        parse();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(accepted)";
}

} // namespace

TEST_CASE("NamedChoice parses every spelling and names every value", "[io]")
{
    CHECK(io::parseChoice(kColours, "--colour", "green") == Colour::Green);
    CHECK(io::parseChoice(kColours, "--colour", "blue") == Colour::Blue);
    CHECK(std::string(io::nameOf(kColours, Colour::Red)) == "red");
    CHECK(std::string(io::nameOf(kColours, Colour::Blue)) == "blue");
    CHECK(std::string(io::nameOf(kColours, Colour::Unlisted)) == "red");
    CHECK(refusal([] { io::parseChoice(kColours, "--colour", "Green"); }) ==
          "--colour: expected red, green or blue, got 'Green'");
    CHECK(refusal([] { io::parseChoice(kColours, "colour", ""); }) == "colour: expected red, green or blue, got ''");
}

TEST_CASE("Backend and FilterKind round-trip through their names", "[io]")
{
    for (auto b : {aec::Backend::Auto, aec::Backend::Cpu, aec::Backend::Gpu})
        CHECK(aec::parseBackend("--backend", aec::toString(b)) == b);
    for (auto f : {aec::FilterKind::Auto, aec::FilterKind::Rls, aec::FilterKind::Kalman, aec::FilterKind::Nlms})
        CHECK(aec::parseFilterKind("--filter", aec::toString(f)) == f);
    CHECK(refusal([] { aec::parseBackend("--backend", "tpu"); }) == "--backend: expected cpu, gpu or auto, got 'tpu'");
    CHECK(refusal([] { aec::parseFilterKind("quell.filter", "lms"); }) ==
          "quell.filter: expected rls, kalman, nlms or auto, got 'lms'");
}
