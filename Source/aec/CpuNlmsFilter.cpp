// SPDX-License-Identifier: GPL-3.0-or-later
#include <string>

#include "aec/CpuFilterAdapter.h"
#include "dsp/Nlms.h"

namespace quell::aec {
namespace {

class CpuNlmsFilter final : public CpuFilterAdapter<dsp::Nlms<float>> {
public:
    explicit CpuNlmsFilter(int taps)
    {
        dsp::NlmsSettings s;
        s.taps = taps;
        filter_.prepare(s);
    }
    int taps() const override { return static_cast<int>(filter_.weights().size()); }
    int channels() const override { return 1; }
    std::string description() const override { return "CPU float32 NLMS, " + std::to_string(taps()) + " taps"; }
};

} // namespace

std::unique_ptr<LinearEchoFilter> makeCpuNlmsFilter(int taps) { return std::make_unique<CpuNlmsFilter>(taps); }

} // namespace quell::aec
