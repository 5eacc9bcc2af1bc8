// SPDX-License-Identifier: GPL-3.0-or-later
// [gpu][iir]: the single-pass GPU IIR scan against float64 CPU filtering (DirectFormIir, BiquadCascade)
// with the same float32-rounded coefficients.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <string>

#include "dsp/BiquadCascade.h"
#include "dsp/DirectFormIir.h"
#include "iir/GpuIir.h"
#include "gpu/BlockSplitRunner.h"
#include "support/Signals.h"

using namespace quell;

namespace {

using Poly = std::vector<std::complex<double>>;

// prod (1 - r_i z^-1) as coefficients of z^0..z^-n.
std::vector<double> polyFromRoots(const Poly& roots)
{
    Poly c{1.0};
    for (const auto& r : roots) {
        Poly next(c.size() + 1, 0.0);
        for (std::size_t i = 0; i < c.size(); ++i) {
            next[i] += c[i];
            next[i + 1] -= r * c[i];
        }
        c = next;
    }
    std::vector<double> out;
    for (const auto& v : c)
        out.push_back(v.real());
    return out;
}

// Random conjugate pairs (and one real root for odd orders), radius in [rmin, rmax].
Poly randomRoots(int order, std::mt19937& rng, double rmin, double rmax)
{
    std::uniform_real_distribution<double> rad(rmin, rmax), ang(0.05, std::numbers::pi - 0.05), sgn(-1.0, 1.0);
    Poly roots;
    for (int i = 0; i + 1 < order; i += 2) {
        const auto p = std::polar(rad(rng), ang(rng));
        roots.push_back(p);
        roots.push_back(std::conj(p));
    }
    if (order % 2 == 1)
        roots.push_back(rad(rng) * (sgn(rng) < 0 ? -1.0 : 1.0));
    return roots;
}

double r32(double v) { return static_cast<double>(static_cast<float>(v)); }

// A stable random direct-form filter of order M in DirectFormIir's convention, coefficients already
// rounded to float32 (so the float64 reference uses exactly what the GPU uses).
gpu::DirectFormCoefficients randomDirect(int order, std::uint32_t seed, double maxRadius = 0.95)
{
    std::mt19937 rng(seed);
    const auto den = polyFromRoots(randomRoots(order, rng, 0.3, maxRadius));
    const auto num = polyFromRoots(randomRoots(order, rng, 0.2, 1.0));
    gpu::DirectFormCoefficients c;
    double gain = 0.0;
    for (double v : den)
        gain += std::abs(v);
    for (double v : num)
        c.b.push_back(r32(v / gain * 2.0));
    c.a.push_back(1.0);
    for (std::size_t j = 1; j < den.size(); ++j)
        c.a.push_back(r32(-den[j]));
    return c;
}

std::vector<dsp::Biquad> randomCascade(int sections, std::uint32_t seed, double maxRadius = 0.95)
{
    std::mt19937 rng(seed);
    std::vector<dsp::Biquad> s;
    for (int q = 0; q < sections; ++q) {
        const auto den = polyFromRoots(randomRoots(2, rng, 0.3, maxRadius));
        const auto num = polyFromRoots(randomRoots(2, rng, 0.2, 1.0));
        s.push_back({r32(num[0]), r32(num[1]), r32(num[2]), r32(den[1]), r32(den[2])});
    }
    return s;
}

gpu::DirectFormCoefficients directFromBiquad(const dsp::Biquad& q)
{
    return {{r32(q.b0), r32(q.b1), r32(q.b2)}, {1.0, -r32(q.a1), -r32(q.a2)}};
}

std::vector<double> cpuDirect(const gpu::DirectFormCoefficients& c, const std::vector<double>& x,
                              const std::vector<double>& pastIn = {}, const std::vector<double>& pastOut = {})
{
    dsp::DirectFormIir<double> f;
    f.prepare(c.b, c.a);
    if (!pastIn.empty())
        f.setState(pastIn, pastOut);
    std::vector<double> y(x.size());
    f.process(x, y);
    return y;
}

std::vector<double> cpuCascade(const std::vector<dsp::Biquad>& s, const std::vector<double>& x)
{
    dsp::BiquadCascade<double> f;
    f.prepare(s);
    std::vector<double> y(x.size());
    f.process(x, y);
    return y;
}

std::vector<double> asDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

std::vector<float> poisoned(std::size_t n) { return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()); }

bool allFinite(const std::vector<float>& v)
{
    return std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); });
}

// Channel c of planar x (n samples per channel), as float64.
std::vector<double> channelOf(const std::vector<float>& x, int c, std::size_t n)
{
    return {x.begin() + static_cast<std::ptrdiff_t>(c * n), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * n)};
}

// x (planar channels) through iir under the schedule, into a NaN-poisoned output.
std::vector<float> runSchedule(gpu::GpuIir& iir, gpu::IirSchedule schedule, const std::vector<float>& x)
{
    iir.setSchedule(schedule);
    auto y = poisoned(x.size());
    iir.process(x, y);
    return y;
}

double directTolerance(int order) { return order <= 2 ? 1e-5 : order <= 4 ? 1e-4 : 1e-3; }

constexpr gpu::IirSchedule kSchedules[] = {gpu::IirSchedule::OneTilePerBlock, gpu::IirSchedule::Persistent,
                                           gpu::IirSchedule::WarpPerTile, gpu::IirSchedule::MultiBlock};

} // namespace

TEST_CASE("GpuIir direct form over 2^24 samples meets the accuracy targets", "[gpu][iir]")
{
    const std::size_t n = std::size_t(1) << 24;
    const auto xd = test::whiteNoise(n, 11);
    const auto x = test::cast<float>(std::span<const double>(xd));
    const auto xr = asDouble(x);
    for (const int order : {1, 2, 4, 8}) {
        for (const auto arith : {gpu::IirArithmetic::Float32, gpu::IirArithmetic::Float64}) {
            const auto c = randomDirect(order, 100u + static_cast<std::uint32_t>(order));
            const auto ref = cpuDirect(c, xr);
            gpu::GpuIir iir;
            iir.prepareDirect(std::span<const gpu::DirectFormCoefficients>(&c, 1), 1, n, arith);
            auto y = poisoned(n);
            iir.process(x, y);
            const double err = test::relativeL2(std::span<const float>(y), std::span<const double>(ref));
            std::printf("iir direct M=%d %s: relative L2 error %.3g over 2^24 samples (%s)\n", order,
                        arith == gpu::IirArithmetic::Float32 ? "f32" : "f64", err, iir.variant());
            CHECK(allFinite(y));
            CHECK(err <= directTolerance(order));
        }
    }
}

TEST_CASE("GpuIir Butterworth high-pass (direct form and section) over 2^24 samples", "[gpu][iir]")
{
    const std::size_t n = std::size_t(1) << 24;
    const auto xd = test::colouredNoise(n, 12, 0.5);
    const auto x = test::cast<float>(std::span<const double>(xd));
    const auto xr = asDouble(x);
    for (const auto& [fc, fs] : {std::pair{20.0, 48000.0}, std::pair{100.0, 16000.0}, std::pair{1000.0, 44100.0}}) {
        const dsp::Biquad q = dsp::butterworthHighPass(fc, fs);
        const dsp::Biquad qr{r32(q.b0), r32(q.b1), r32(q.b2), r32(q.a1), r32(q.a2)};
        const auto ref = cpuCascade({qr}, xr);
        {
            const auto c = directFromBiquad(q);
            gpu::GpuIir iir;
            iir.prepareDirect(std::span<const gpu::DirectFormCoefficients>(&c, 1), 1, n);
            auto y = poisoned(n);
            iir.process(x, y);
            const double err = test::relativeL2(std::span<const float>(y), std::span<const double>(ref));
            std::printf("iir butterworth HP %g Hz @ %g direct (auto arithmetic): relative L2 error %.3g (%s)\n", fc, fs, err,
                        iir.variant());
            CHECK(allFinite(y));
            CHECK(err <= 1e-5);
        }
        {
            const std::vector<std::vector<dsp::Biquad>> sets{{q}};
            gpu::GpuIir iir;
            iir.prepareCascade(sets, 1, n);
            auto y = poisoned(n);
            iir.process(x, y);
            const double err = test::relativeL2(std::span<const float>(y), std::span<const double>(ref));
            std::printf("iir butterworth HP %g Hz @ %g section (auto arithmetic): relative L2 error %.3g (%s)\n", fc, fs, err,
                        iir.variant());
            CHECK(allFinite(y));
            CHECK(err <= 1e-5);
        }
    }
}

TEST_CASE("GpuIir order-8 cascade of sections over 2^24 samples", "[gpu][iir]")
{
    const std::size_t n = std::size_t(1) << 24;
    const auto xd = test::whiteNoise(n, 13);
    const auto x = test::cast<float>(std::span<const double>(xd));
    const auto xr = asDouble(x);
    for (const int sections : {2, 3, 4}) {
        for (const auto arith : {gpu::IirArithmetic::Float32, gpu::IirArithmetic::Float64}) {
            const std::vector<std::vector<dsp::Biquad>> sets{randomCascade(sections, 200u + static_cast<std::uint32_t>(sections))};
            const auto ref = cpuCascade(sets[0], xr);
            gpu::GpuIir iir;
            iir.prepareCascade(sets, 1, n, arith);
            auto y = poisoned(n);
            iir.process(x, y);
            const double err = test::relativeL2(std::span<const float>(y), std::span<const double>(ref));
            std::printf("iir cascade %d sections %s: relative L2 error %.3g (%s)\n", sections,
                        arith == gpu::IirArithmetic::Float32 ? "f32" : "f64", err, iir.variant());
            CHECK(allFinite(y));
            CHECK(err <= directTolerance(2 * sections));
        }
    }
}

TEST_CASE("GpuIir: awkward lengths, block splits, channels with their own filters and initial state", "[gpu][iir]")
{
    std::mt19937 rng(77);
    for (const int order : {1, 2, 3, 5, 8}) {
        for (const std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(31), std::size_t(4093),
                                    std::size_t(4097), std::size_t(65537), std::size_t(1000003)}) {
            const int channels = 3;
            std::vector<gpu::DirectFormCoefficients> sets;
            for (int c = 0; c < channels; ++c)
                sets.push_back(randomDirect(order, static_cast<std::uint32_t>(1000 + 31 * order + c + n % 97)));
            const auto xd = test::whiteNoise(channels * n, static_cast<std::uint32_t>(n + order));
            const auto x = test::cast<float>(std::span<const double>(xd));
            std::vector<std::vector<double>> pastIn(channels), pastOut(channels), refs(channels);
            std::vector<std::vector<float>> pastInF(channels), pastOutF(channels);
            for (int c = 0; c < channels; ++c) {
                const auto pi = test::whiteNoise(static_cast<std::size_t>(order), static_cast<std::uint32_t>(c + 5));
                const auto po = test::whiteNoise(static_cast<std::size_t>(order), static_cast<std::uint32_t>(c + 9));
                pastInF[c].assign(pi.begin(), pi.end());
                pastOutF[c].assign(po.begin(), po.end());
                pastIn[c].assign(pastInF[c].begin(), pastInF[c].end());
                pastOut[c].assign(pastOutF[c].begin(), pastOutF[c].end());
                const std::vector<double> xc(x.begin() + static_cast<std::ptrdiff_t>(c * n), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * n));
                refs[c] = cpuDirect(sets[static_cast<std::size_t>(c)], xc, pastIn[c], pastOut[c]);
            }
            const std::uint32_t splitSeed = static_cast<std::uint32_t>(rng());
            // The default (Auto), the strategies that differ most from it in tiling and state handling,
            // and the warp kernel's other tunings (the other long-run shape, early stores on and off).
            struct Run {
                gpu::IirSchedule schedule;
                gpu::IirTuning tuning;
            };
            for (const auto& [schedule, tuning] :
                 {Run{gpu::IirSchedule::Auto, {}}, Run{gpu::IirSchedule::OneTilePerBlock, {}},
                  Run{gpu::IirSchedule::WarpPerTile, {}}, Run{gpu::IirSchedule::MultiBlock, {}},
                  Run{gpu::IirSchedule::WarpPerTile, {1, -1}}, Run{gpu::IirSchedule::WarpPerTile, {0, 0}},
                  Run{gpu::IirSchedule::WarpPerTile, {1, 1}}}) {
                gpu::GpuIir iir;
                iir.setTuning(tuning);
                // A small maxSamples forces multi-launch splitting inside processDevice for the long cases.
                iir.prepareDirect(sets, channels, n > 100000 ? 300000 : 8192);
                iir.setSchedule(schedule);
                for (int c = 0; c < channels; ++c)
                    iir.setState(c, pastInF[c], pastOutF[c]);
                const std::size_t maxBlock = n < 100 ? 4 : n / 3 + 1;
                const auto y = test::runInRandomBlocks(iir, x, channels, n, splitSeed, maxBlock);
                CHECK(allFinite(y));
                double worst = 0.0;
                for (int c = 0; c < channels; ++c) {
                    const double err = test::relativeL2(std::span<const float>(y.data() + c * n, n), std::span<const double>(refs[c]));
                    worst = std::max(worst, err);
                }
                INFO("order " << order << " length " << n << " " << iir.variant() << " tuning " << tuning.longRunShape << "/"
                                << tuning.earlyStores << " worst channel error " << worst);
                CHECK(worst <= directTolerance(order));
            }
        }
    }
}

TEST_CASE("GpuIir cascade streaming: block splits and channels match one CPU pass", "[gpu][iir]")
{
    for (const int sections : {1, 2, 4}) {
        for (const std::size_t n : {std::size_t(5), std::size_t(4099), std::size_t(300007)}) {
            const int channels = 4;
            std::vector<std::vector<dsp::Biquad>> sets;
            for (int c = 0; c < channels; ++c)
                sets.push_back(randomCascade(sections, static_cast<std::uint32_t>(500 + 7 * c + sections + n % 13)));
            const auto xd = test::whiteNoise(channels * n, static_cast<std::uint32_t>(n * 3 + sections));
            const auto x = test::cast<float>(std::span<const double>(xd));
            gpu::GpuIir iir;
            iir.prepareCascade(sets, channels, 65536);
            const auto y = test::runInRandomBlocks(iir, x, channels, n, 99u + static_cast<std::uint32_t>(n), n / 2 + 1);
            CHECK(allFinite(y));
            for (int c = 0; c < channels; ++c) {
                const std::vector<double> xc(x.begin() + static_cast<std::ptrdiff_t>(c * n), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * n));
                const auto ref = cpuCascade(sets[static_cast<std::size_t>(c)], xc);
                const double err = test::relativeL2(std::span<const float>(y.data() + c * n, n), std::span<const double>(ref));
                INFO("sections " << sections << " length " << n << " channel " << c);
                CHECK(err <= directTolerance(2 * sections));
            }
        }
    }
}

TEST_CASE("GpuIir batched 1024 channels x 4096, order 2, per-channel filters", "[gpu][iir]")
{
    const int channels = 1024;
    const std::size_t n = 4096;
    std::vector<gpu::DirectFormCoefficients> sets;
    for (int c = 0; c < channels; ++c)
        sets.push_back(randomDirect(2, static_cast<std::uint32_t>(9000 + c)));
    const auto xd = test::whiteNoise(channels * n, 4242);
    const auto x = test::cast<float>(std::span<const double>(xd));
    gpu::GpuIir iir;
    iir.prepareDirect(sets, channels, n);
    auto y = poisoned(x.size());
    iir.process(x, y);
    CHECK(allFinite(y));
    double worst = 0.0;
    for (int c = 0; c < channels; c += 37) {
        const std::vector<double> xc(x.begin() + static_cast<std::ptrdiff_t>(c * n), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * n));
        const auto ref = cpuDirect(sets[static_cast<std::size_t>(c)], xc);
        worst = std::max(worst, test::relativeL2(std::span<const float>(y.data() + c * n, n), std::span<const double>(ref)));
    }
    std::printf("iir batched 1024 x 4096 order 2: worst sampled channel error %.3g\n", worst);
    CHECK(worst <= 1e-5);
}

TEST_CASE("GpuIir slowly decaying filter (pole radius 0.9995) keeps the look-back exact", "[gpu][iir]")
{
    const std::size_t n = std::size_t(1) << 22;
    const auto xd = test::whiteNoise(n, 21);
    const auto x = test::cast<float>(std::span<const double>(xd));
    const auto xr = asDouble(x);
    gpu::DirectFormCoefficients c{{r32(0.001)}, {1.0, r32(0.9995)}};
    const auto ref = cpuDirect(c, xr);
    for (const auto schedule : kSchedules) {
        gpu::GpuIir iir;
        iir.prepareDirect(std::span<const gpu::DirectFormCoefficients>(&c, 1), 1, n, gpu::IirArithmetic::Float32);
        iir.setSchedule(schedule);
        auto y = poisoned(n);
        iir.process(x, y);
        const double err = test::relativeL2(std::span<const float>(y), std::span<const double>(ref));
        std::printf("iir order 1 pole 0.9995 (schedule %d): relative L2 error %.3g\n", static_cast<int>(schedule), err);
        CHECK(allFinite(y));
        CHECK(err <= 1e-5);
    }
}

TEST_CASE("GpuIir: every schedule (block, persistent, warp per tile, multi-block) across channel boundaries", "[gpu][iir]")
{
    const int channels = 5;
    const std::size_t n = 10007; // a partial last tile in every channel
    for (const int order : {1, 2, 4, 8}) {
        std::vector<gpu::DirectFormCoefficients> sets;
        for (int c = 0; c < channels; ++c)
            sets.push_back(randomDirect(order, static_cast<std::uint32_t>(3000 + 10 * order + c)));
        const auto xd = test::whiteNoise(channels * n, static_cast<std::uint32_t>(order + 55));
        const auto x = test::cast<float>(std::span<const double>(xd));
        for (const auto arith : {gpu::IirArithmetic::Float32, gpu::IirArithmetic::Float64}) {
            for (const auto schedule : kSchedules) {
                gpu::GpuIir iir;
                iir.prepareDirect(sets, channels, n, arith);
                const auto y = runSchedule(iir, schedule, x);
                CHECK(allFinite(y));
                for (int c = 0; c < channels; ++c) {
                    const auto ref = cpuDirect(sets[static_cast<std::size_t>(c)], channelOf(x, c, n));
                    const double err = test::relativeL2(std::span<const float>(y.data() + c * n, n), std::span<const double>(ref));
                    INFO("order " << order << " schedule " << static_cast<int>(schedule) << " channel " << c << " " << iir.variant());
                    CHECK(err <= directTolerance(order));
                }
            }
        }
    }
}

TEST_CASE("GpuIir: every schedule on cascades of 2, 3 and 4 sections across channel boundaries", "[gpu][iir]")
{
    const int channels = 5;
    const std::size_t n = 10007; // a partial last tile in every channel
    for (const int sections : {2, 3, 4}) {
        std::vector<std::vector<dsp::Biquad>> sets;
        for (int c = 0; c < channels; ++c)
            sets.push_back(randomCascade(sections, static_cast<std::uint32_t>(3500 + 10 * sections + c)));
        const auto xd = test::whiteNoise(channels * n, static_cast<std::uint32_t>(sections + 65));
        const auto x = test::cast<float>(std::span<const double>(xd));
        for (const auto arith : {gpu::IirArithmetic::Float32, gpu::IirArithmetic::Float64}) {
            for (const auto schedule : {gpu::IirSchedule::Auto, kSchedules[0], kSchedules[1], kSchedules[2], kSchedules[3]}) {
                gpu::GpuIir iir;
                iir.prepareCascade(sets, channels, n, arith);
                const auto y = runSchedule(iir, schedule, x);
                CHECK(allFinite(y));
                double worst = 0.0;
                for (int c = 0; c < channels; ++c) {
                    const auto ref = cpuCascade(sets[static_cast<std::size_t>(c)], channelOf(x, c, n));
                    worst = std::max(worst, test::relativeL2(std::span<const float>(y.data() + c * n, n), std::span<const double>(ref)));
                }
                std::printf("iir cascade %d sections %s schedule %d (%s): worst channel error %.3g\n", sections,
                            arith == gpu::IirArithmetic::Float32 ? "f32" : "f64", static_cast<int>(schedule), iir.variant(), worst);
                CHECK(worst <= directTolerance(2 * sections));
            }
        }
    }
}

TEST_CASE("GpuIir: a response outlasting 32 warp tiles sends Auto back to a block per tile", "[gpu][iir]")
{
    // A 20 Hz high-pass at 48 kHz (float64 under Auto) decays over ~12000 samples: about 49 warp tiles of
    // 256 samples, so the warp tiles' look-back would be a serial chain.
    const std::size_t n = std::size_t(1) << 20;
    const int channels = 2;
    const auto xd = test::colouredNoise(channels * n, 31, 0.5);
    const auto x = test::cast<float>(std::span<const double>(xd));
    const dsp::Biquad q = dsp::butterworthHighPass(20.0, 48000.0);
    const dsp::Biquad qr{r32(q.b0), r32(q.b1), r32(q.b2), r32(q.a1), r32(q.a2)};
    std::vector<std::vector<double>> refs;
    for (int c = 0; c < channels; ++c)
        refs.push_back(cpuCascade({qr}, channelOf(x, c, n)));
    for (const bool cascade : {false, true}) {
        for (const auto schedule : {gpu::IirSchedule::Auto, gpu::IirSchedule::WarpPerTile}) {
            gpu::GpuIir iir;
            if (cascade) {
                const std::vector<std::vector<dsp::Biquad>> sets{{q}};
                iir.prepareCascade(sets, channels, n);
            } else {
                const auto c = directFromBiquad(q);
                iir.prepareDirect(std::span<const gpu::DirectFormCoefficients>(&c, 1), channels, n);
            }
            const auto y = runSchedule(iir, schedule, x);
            const std::string variant = iir.variant();
            CHECK(variant.rfind(schedule == gpu::IirSchedule::Auto ? "plr-block-" : "plr-warp-", 0) == 0);
            CHECK(allFinite(y));
            double worst = 0.0;
            for (int c = 0; c < channels; ++c)
                worst = std::max(worst, test::relativeL2(std::span<const float>(y.data() + c * n, n), std::span<const double>(refs[c])));
            std::printf("iir butterworth HP 20 Hz @ 48k %s, schedule %d (%s): worst channel error %.3g\n",
                        cascade ? "section" : "direct", static_cast<int>(schedule), variant.c_str(), worst);
            CHECK(worst <= 1e-5);
        }
    }
}

TEST_CASE("GpuIir order 1, long multi-channel calls (the long-signal warp tiles) with state carried across calls", "[gpu][iir]")
{
    // Above 2^23 samples per launch the order-1 warp-per-tile kernel switches to its long-signal tile shape;
    // the other tests run it on one channel only.
    const int channels = 3;
    const std::size_t n = 3000017;
    std::vector<gpu::DirectFormCoefficients> sets;
    for (int c = 0; c < channels; ++c)
        sets.push_back(randomDirect(1, static_cast<std::uint32_t>(7100 + c)));
    const auto xd = test::whiteNoise(channels * n, 7177);
    const auto x = test::cast<float>(std::span<const double>(xd));
    for (const auto schedule : {gpu::IirSchedule::Auto, gpu::IirSchedule::WarpPerTile}) {
        gpu::GpuIir iir;
        iir.prepareDirect(sets, channels, n);
        iir.setSchedule(schedule);
        std::vector<std::vector<double>> pastIn(channels), pastOut(channels);
        for (int c = 0; c < channels; ++c) {
            const std::vector<float> fi{0.25f * static_cast<float>(c + 1)}, fo{-0.5f * static_cast<float>(c + 1)};
            iir.setState(c, fi, fo);
            pastIn[c].assign(fi.begin(), fi.end());
            pastOut[c].assign(fo.begin(), fo.end());
        }
        // Two calls, the first ending inside a tile: the second starts from the carried state.
        const auto y = test::runInRandomBlocks(iir, x, channels, n, 4242u, n - 12345);
        CHECK(allFinite(y));
        for (int c = 0; c < channels; ++c) {
            const std::vector<double> xc(x.begin() + static_cast<std::ptrdiff_t>(c * n), x.begin() + static_cast<std::ptrdiff_t>((c + 1) * n));
            const auto ref = cpuDirect(sets[static_cast<std::size_t>(c)], xc, pastIn[c], pastOut[c]);
            const double err = test::relativeL2(std::span<const float>(y.data() + c * n, n), std::span<const double>(ref));
            INFO("channel " << c << " " << iir.variant());
            CHECK(err <= 1e-5);
        }
    }
}
