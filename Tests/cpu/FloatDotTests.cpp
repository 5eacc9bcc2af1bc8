// SPDX-License-Identifier: GPL-3.0-or-later
// dsp::floatDot and dsp::floatDotPair: the float64 dot product within float rounding at every length
// (whole vectors, tails, none), the pair's first product the single one's bits, and the same bits from
// data at any alignment (the regressor is read from every offset of its line).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

#include "dsp/FloatDot.h"
#include "support/Signals.h"

using namespace quell;

TEST_CASE("floatDot is the dot product at every length, the pair's first product bit for bit", "[dsp][dot]")
{
    const std::vector<double> wd = test::whiteNoise(5000, 3, 1.0), ud = test::whiteNoise(5000, 4, 1.0), vd = test::whiteNoise(5000, 5, 1.0);
    const std::vector<float> w = test::cast<float>(wd), u = test::cast<float>(ud), v = test::cast<float>(vd);
    for (const std::size_t n : {0, 1, 7, 15, 16, 17, 31, 33, 512, 1000, 4096, 4999}) {
        INFO("n = " << n);
        double exact = 0.0, scale = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            exact += double(w[i]) * u[i];
            scale += std::abs(double(w[i]) * u[i]);
        }
        const float d = dsp::floatDot(w.data(), u.data(), n);
        CHECK(std::abs(d - exact) <= 1e-6 * std::max(scale, 1.0));
        const dsp::FloatDotPair pair = dsp::floatDotPair(w.data(), v.data(), u.data(), n);
        CHECK(pair.a == d);
        CHECK(pair.b == dsp::floatDot(v.data(), u.data(), n));
    }
    CHECK(dsp::floatDot(w.data(), u.data(), 0) == 0.0f);
}

TEST_CASE("floatDot gives the same bits for the same numbers at any alignment", "[dsp][dot]")
{
    const std::vector<float> w = test::cast<float>(test::whiteNoise(1037, 8, 1.0)), u = test::cast<float>(test::whiteNoise(1037, 9, 1.0));
    const float reference = dsp::floatDot(w.data(), u.data(), w.size());
    for (std::size_t offset = 1; offset < 8; ++offset) {
        std::vector<float> shiftedW(w.size() + 8), shiftedU(u.size() + 8);
        std::copy(w.begin(), w.end(), shiftedW.begin() + static_cast<std::ptrdiff_t>(offset));
        std::copy(u.begin(), u.end(), shiftedU.begin() + static_cast<std::ptrdiff_t>(8 - offset));
        INFO("offset " << offset);
        CHECK(dsp::floatDot(shiftedW.data() + offset, shiftedU.data() + (8 - offset), w.size()) == reference);
    }
}
