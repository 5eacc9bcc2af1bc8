// SPDX-License-Identifier: GPL-3.0-or-later
// C++20 helper of BenchFir.cu (the .cu files are C++17 and cannot include dsp/PolyphaseResampler.h): the
// resampler's prototype low-pass, designed by the CPU code the GPU resampler must match.
#include <numeric>
#include <vector>

#include "dsp/PolyphaseResampler.h"

namespace quell::bench {

std::vector<double> resamplerPrototype(int inputRate, int outputRate)
{
    const int g = std::gcd(inputRate, outputRate);
    return dsp::designResamplerPrototype(outputRate / g, inputRate / g, dsp::ResamplerDesign{});
}

} // namespace quell::bench
