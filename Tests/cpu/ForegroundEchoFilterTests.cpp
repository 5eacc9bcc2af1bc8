// SPDX-License-Identifier: GPL-3.0-or-later
// ForegroundEchoFilter (two-path double-talk protection): copies the background's weights only when the
// background is clearly better, and then cancels exactly with them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "aec/ForegroundEchoFilter.h"
#include "support/Signals.h"

using namespace quell;

namespace {

// A stand-in background filter with given weights (the foreground only reads them).
class FixedWeights final : public aec::LinearEchoFilter {
public:
    explicit FixedWeights(std::vector<float> w) : w_(std::move(w)) {}
    void process(std::span<const float>, std::span<const float>, std::span<float>) override {}
    void reset() override {}
    int taps() const override { return static_cast<int>(w_.size()); }
    int channels() const override { return 1; }
    void setAdaptation(bool) override {}
    std::vector<float> weights() const override { return w_; }
    dsp::RlsHealth health() const override { return {}; }
    std::string description() const override { return "fixed"; }
    bool onGpu() const override { return false; }

private:
    std::vector<float> w_;
};

// The path h with white misalignment `db` below its energy (seeded), as float weights.
std::vector<float> offBy(const std::vector<double>& h, double db, std::uint32_t seed)
{
    const auto err = test::whiteNoise(h.size(), seed, 1.0);
    double eh = 0.0, ee = 0.0;
    for (std::size_t k = 0; k < h.size(); ++k) {
        eh += h[k] * h[k];
        ee += err[k] * err[k];
    }
    std::vector<float> w(h.size());
    for (std::size_t k = 0; k < h.size(); ++k)
        w[k] = static_cast<float>(h[k] + err[k] * std::sqrt(eh / ee * std::pow(10.0, db / 10.0)));
    return w;
}

// The microphone less the echo estimate of weights w on the far end x: a fixed filter's error.
std::vector<float> errorOf(const std::vector<float>& mic, const std::vector<double>& x, const std::vector<float>& w)
{
    const std::vector<double> wd(w.begin(), w.end());
    const auto y = test::convolve(std::span<const double>(x), std::span<const double>(wd));
    std::vector<float> e(mic.size());
    for (std::size_t i = 0; i < mic.size(); ++i)
        e[i] = static_cast<float>(mic[i] - y[i]);
    return e;
}

} // namespace

TEST_CASE("ForegroundEchoFilter copies a better background and then cancels with its weights", "[aec][twopath]")
{
    const int taps = 37, n = 1000;   // awkward sizes: 6.25 segments of 160
    const auto hd = test::randomSystem(taps, 5, 0.9);
    const auto xd = test::whiteNoise(n, 6, 0.1);
    const auto yd = test::convolve(std::span<const double>(xd), std::span<const double>(hd));
    std::vector<float> x(xd.begin(), xd.end()), mic(n), bg(n, 0.0f), out(n, NAN);
    for (int i = 0; i < n; ++i)
        mic[i] = static_cast<float>(yd[i]);
    FixedWeights source(std::vector<float>(hd.begin(), hd.end()));
    aec::ForegroundEchoFilter fg;
    aec::ForegroundSettings s;
    s.tapsPerChannel = taps;
    fg.prepare(s);
    // The background's error is zero (perfect): after two 160-sample segments a snapshot of its weights
    // goes on probation for a third, beats the foreground there as a fixed filter, and is taken.
    fg.process(mic, x, bg, out, source);
    CHECK(fg.copies() >= 1);   // (later snapshots, the same weights, may refine it with themselves)
    for (int k = 0; k < taps; ++k)
        CHECK(fg.weights()[k] == static_cast<float>(hd[k]));
    // Before the copy the output is the microphone (zero weights); after it, the echo is gone.
    for (int i = 0; i < 480; ++i)
        CHECK(out[i] == mic[i]);
    CHECK(test::reductionDb(std::span(mic).subspan(480 + taps), std::span(out).subspan(480 + taps)) > 100.0);   // float32 rounding only
}

TEST_CASE("ForegroundEchoFilter keeps its weights while the background is worse (double talk)", "[aec][twopath]")
{
    const int taps = 50, n = 3 * 160 + 77;
    const auto hd = test::randomSystem(taps, 8, 0.9);
    const auto xd = test::whiteNoise(n, 9, 0.1);
    const auto yd = test::convolve(std::span<const double>(xd), std::span<const double>(hd));
    const auto near = test::whiteNoise(n, 10, 0.1);
    std::vector<float> x(xd.begin(), xd.end()), mic(n), bg(n), out(n, NAN);
    for (int i = 0; i < n; ++i)
        mic[i] = static_cast<float>(yd[i]);
    aec::ForegroundEchoFilter fg;
    aec::ForegroundSettings s;
    s.tapsPerChannel = taps;
    fg.prepare(s);
    FixedWeights good(std::vector<float>(hd.begin(), hd.end()));
    fg.process(mic, x, std::vector<float>(n, 0.0f), out, good);
    const long copies = fg.copies();
    REQUIRE(copies >= 1);
    // Now a near-end talker, and a background that has wandered off (its error exceeds the foreground's).
    for (int i = 0; i < n; ++i) {
        mic[i] = static_cast<float>(yd[i] + near[i]);
        bg[i] = static_cast<float>(near[i] * 1.5);
    }
    FixedWeights bad(std::vector<float>(taps, 0.25f));
    fg.process(mic, x, bg, out, bad);
    CHECK(fg.copies() == copies);
    CHECK(fg.weights()[0] == static_cast<float>(hd[0]));
    // The output is the near end (to float32 rounding), not the damaged background's.
    double pn = 0.0, pe = 0.0;
    for (int i = taps; i < n; ++i) {
        pn += near[i] * near[i];
        pe += (out[i] - near[i]) * (out[i] - near[i]);
    }
    CHECK(10.0 * std::log10(pn / pe) > 100.0);
}

TEST_CASE("ForegroundEchoFilter rejects a background whose advantage is not in its weights", "[aec][twopath]")
{
    // A near end alone and a far end of faint noise: an RLS that follows the near end through the far
    // end's samples shows a small a-priori error, while its weights, held still, explain nothing and only
    // add noise. The snapshot fails its probation and the output stays the microphone.
    const int taps = 64, n = 20 * 160;
    const auto near = test::whiteNoise(n, 31, 0.05);
    const auto xd = test::whiteNoise(n, 32, 3e-5);
    std::vector<float> x(xd.begin(), xd.end()), mic(n), bg(n), out(n, NAN);
    for (int i = 0; i < n; ++i) {
        mic[i] = static_cast<float>(near[i]);
        bg[i] = static_cast<float>(0.3 * near[i]);   // "10 dB better" by following, not by explaining
    }
    const auto junk = test::randomSystem(taps, 33, 0.9);
    std::vector<float> w(junk.begin(), junk.end());
    for (auto& v : w)
        v *= 3000.0f;   // weights that turn the faint far end into something as loud as the near end
    FixedWeights background(w);
    aec::ForegroundEchoFilter fg;
    aec::ForegroundSettings s;
    s.tapsPerChannel = taps;
    fg.prepare(s);
    fg.process(mic, x, bg, out, background);
    CHECK(fg.copies() == 0);
    CHECK(fg.rejectedCopies() >= 5);
    for (int i = 0; i < n; ++i)
        REQUIRE(out[i] == mic[i]);
}

TEST_CASE("ForegroundEchoFilter keeps a long filter's snapshot on probation for two segments where the foreground is not good", "[aec][twopath]")
{
    // 2560 taps: a quarter of the length is four segments, capped at two. The snapshot's weights explain
    // the microphone in the first of them only (a fit that fades, as an RLS's fit of a talker through an
    // unrelated far end does); over the next the microphone is a near end its weights make louder. With
    // the automatic probation it is rejected; with one segment of probation it would have been taken.
    const int taps = 2560, seg = 160, n = 8 * seg;
    const auto hd = test::randomSystem(taps, 41, 200.0);
    const auto xd = test::whiteNoise(n, 42, 0.1);
    const auto yd = test::convolve(std::span<const double>(xd), std::span<const double>(hd));
    const auto near = test::whiteNoise(n, 43, 0.05);
    std::vector<float> x(xd.begin(), xd.end()), mic(n), bg(n, 0.0f);
    for (int i = 0; i < n; ++i) {
        // Segments 0-2: the echo of hd (the background cancels it: error 0); from segment 3: a near end.
        mic[i] = static_cast<float>(i < 3 * seg ? yd[i] : near[i]);
        bg[i] = i < 2 * seg ? 0.0f : mic[i];
    }
    FixedWeights source(std::vector<float>(hd.begin(), hd.end()));
    for (const int probation : {0, 1}) {
        aec::ForegroundEchoFilter fg;
        aec::ForegroundSettings s;
        s.tapsPerChannel = taps;
        s.probationSegments = probation;
        fg.prepare(s);
        std::vector<float> out(n);
        fg.process(mic, x, bg, out, source);
        INFO("probation " << (probation == 0 ? "automatic" : "1 segment"));
        if (probation == 0) {
            CHECK(fg.copies() == 0);
            CHECK(fg.rejectedCopies() >= 1);
        } else {
            CHECK(fg.copies() >= 1);
        }
    }
}

TEST_CASE("ForegroundEchoFilter run ahead of its background and caught up equals process(), bit for bit", "[aec][twopath]")
{
    // 30 segments: the echo path changes at segment 12 and the background's weights follow it at 14;
    // its error is small, then large (double talk) from segment 20 to 24. Copies, refinements and
    // rejected probations all happen. One foreground takes each segment in one process() call; the
    // other takes an awkward first part with process() and the rest with processAhead(), then catchUp()
    // with the background's weights as they were at the segment's end.
    const int taps = 96, seg = 160, segments = 30, n = segments * seg;
    const auto h1 = test::randomSystem(taps, 51, 0.9), h2 = test::randomSystem(taps, 52, 0.9);
    const auto xd = test::whiteNoise(n, 53, 0.1);
    const auto y1 = test::convolve(std::span<const double>(xd), std::span<const double>(h1));
    const auto y2 = test::convolve(std::span<const double>(xd), std::span<const double>(h2));
    const auto near = test::whiteNoise(n, 54, 0.05);
    std::vector<float> x(xd.begin(), xd.end()), mic(n), bg(n);
    for (int i = 0; i < n; ++i) {
        const int segment = i / seg;
        const bool talk = segment >= 20 && segment < 25;
        mic[i] = static_cast<float>((segment < 12 ? y1[i] : y2[i]) + (talk ? near[i] : 0.0));
        bg[i] = static_cast<float>(talk ? 0.8 * near[i] : segment >= 12 && segment < 14 ? mic[i] : 1e-4 * near[i]);
    }
    const std::vector<float> w1(h1.begin(), h1.end()), w2(h2.begin(), h2.end());
    aec::ForegroundSettings s;
    s.tapsPerChannel = taps;
    aec::ForegroundEchoFilter whole, ahead;
    whole.prepare(s);
    ahead.prepare(s);
    std::vector<float> outWhole(n), outAhead(n);
    for (int segment = 0; segment < segments; ++segment) {
        const FixedWeights background(segment < 14 ? w1 : w2);
        const std::size_t at = static_cast<std::size_t>(segment * seg), first = static_cast<std::size_t>((37 * segment) % seg);
        auto part = [&](const std::vector<float>& v, std::size_t from, std::size_t len) { return std::span(v).subspan(at + from, len); };
        whole.process(part(mic, 0, seg), part(x, 0, seg), part(bg, 0, seg), std::span(outWhole).subspan(at, seg), background);
        ahead.process(part(mic, 0, first), part(x, 0, first), part(bg, 0, first), std::span(outAhead).subspan(at, first), background);
        CHECK(ahead.samplesToSegmentEnd() == seg - static_cast<int>(first));
        ahead.processAhead(part(mic, first, seg - first), part(x, first, seg - first), std::span(outAhead).subspan(at + first, seg - first));
        // Between the two halves the segment has ended but its snapshot decision waits for the background.
        CHECK_THROWS_AS(ahead.process(part(mic, 0, 1), part(x, 0, 1), part(bg, 0, 1), std::span(outAhead).subspan(at, 1), background),
                        std::logic_error);
        ahead.catchUp(part(bg, first, seg - first), background.weights());
        CHECK(ahead.samplesToSegmentEnd() == seg);
    }
    CHECK(std::memcmp(outWhole.data(), outAhead.data(), outWhole.size() * sizeof(float)) == 0);
    CHECK(whole.copies() == ahead.copies());
    CHECK(whole.rejectedCopies() == ahead.rejectedCopies());
    CHECK(std::memcmp(whole.weights().data(), ahead.weights().data(), whole.weights().size() * sizeof(float)) == 0);
    INFO("copies " << whole.copies() << ", rejected " << whole.rejectedCopies());
    CHECK(whole.copies() >= 2);
    CHECK(whole.rejectedCopies() >= 1);
}

TEST_CASE("ForegroundEchoFilter refines a good foreground whose output is the noise with a snapshot no worse over its probation", "[aec][twopath]")
{
    // Echo 10 dB over white noise at the microphone. The foreground holds weights 20 dB off the path
    // (its residual 10 dB under the noise); the background's are 30 dB off. Both errors are mostly the
    // noise, and over 10 ms they differ by less than the noise's own fluctuation: the snapshot must win
    // on the probation's total and lose by no more than refineNoiseTolerance in any segment. Held to
    // winning every segment of a probation of seven, it is not taken in 30 segments.
    const int taps = 64, segment = 160, n = 60 * segment;
    const auto hd = test::randomSystem(taps, 51, 0.9);
    const auto xd = test::whiteNoise(n, 52, 0.1);
    const auto yd = test::convolve(std::span<const double>(xd), std::span<const double>(hd));
    double echo = 0.0;
    for (const double y : yd)
        echo += y * y;
    const auto noise = test::whiteNoise(n, 53, std::sqrt(0.1 * echo / n) * std::sqrt(3.0));
    const std::vector<float> coarse = offBy(hd, -20.0, 54), fine = offBy(hd, -30.0, 55);
    std::vector<float> x(xd.begin(), xd.end()), mic(n), out(n);
    for (int i = 0; i < n; ++i)
        mic[i] = static_cast<float>(yd[i] + noise[i]);
    const std::vector<float> coarseError = errorOf(mic, xd, coarse), fineError = errorOf(mic, xd, fine);
    auto run = [&](double tolerance) {
        aec::ForegroundEchoFilter fg;
        aec::ForegroundSettings s;
        s.tapsPerChannel = taps;
        s.refineNoiseTolerance = tolerance;
        s.probationSegments = s.refineProbationSegments = 7;   // a 4096-tap filter's before 2026-11-27
        fg.prepare(s);
        const std::size_t half = n / 2;
        FixedWeights first(coarse), second(fine);
        fg.process(std::span(mic).first(half), std::span(x).first(half), std::span(coarseError).first(half), std::span(out).first(half), first);
        REQUIRE(fg.copies() >= 1);
        REQUIRE(fg.weights()[0] == coarse[0]);
        int segmentsToFine = -1;
        for (std::size_t at = half; at < static_cast<std::size_t>(n); at += segment) {
            fg.process(std::span(mic).subspan(at, segment), std::span(x).subspan(at, segment), std::span(fineError).subspan(at, segment),
                       std::span(out).subspan(at, segment), second);
            if (segmentsToFine < 0 && fg.weights()[0] == fine[0])
                segmentsToFine = static_cast<int>((at - half) / segment) + 1;
        }
        return segmentsToFine;
    };
    const int tolerant = run(aec::ForegroundSettings{}.refineNoiseTolerance), strict = run(1.0);
    CAPTURE(tolerant, strict);
    CHECK(tolerant > 0);
    CHECK(tolerant <= 24);   // five segments no worse and the probation of seven, twice at most
    CHECK((strict < 0 || strict > tolerant));
}

TEST_CASE("ForegroundEchoFilter refines a good foreground after one segment of probation", "[aec][twopath]")
{
    // No noise: the foreground's weights are 25 dB off the path (good: it removes more than 20 dB), the
    // background's 40 dB off. After two segments clearly better a snapshot goes on probation, and is
    // taken after one segment of it (three in all); held for seven (the probation of a 4096-tap filter
    // before 2026-11-27) it is taken six segments later, while a far end that moves on (music's next
    // chord) outdates it.
    const int taps = 64, segment = 160, n = 40 * segment;
    const auto hd = test::randomSystem(taps, 61, 0.9);
    const auto xd = test::whiteNoise(n, 62, 0.1);
    const auto yd = test::convolve(std::span<const double>(xd), std::span<const double>(hd));
    const std::vector<float> coarse = offBy(hd, -25.0, 63), fine = offBy(hd, -40.0, 64);
    std::vector<float> x(xd.begin(), xd.end()), mic(yd.begin(), yd.end()), out(n);
    const std::vector<float> fineError = errorOf(mic, xd, fine);
    auto segmentsToFine = [&](int refineProbation) {
        aec::ForegroundEchoFilter fg;
        aec::ForegroundSettings s;
        s.tapsPerChannel = taps;
        s.refineProbationSegments = refineProbation;
        fg.prepare(s);
        FixedWeights first(coarse), second(fine);
        fg.copyFrom(first);
        for (int k = 0; k < n / segment; ++k) {
            const std::size_t at = static_cast<std::size_t>(k * segment);
            fg.process(std::span(mic).subspan(at, segment), std::span(x).subspan(at, segment), std::span(fineError).subspan(at, segment),
                       std::span(out).subspan(at, segment), second);
            if (fg.weights()[0] == fine[0])
                return k + 1;
        }
        return -1;
    };
    const int one = segmentsToFine(aec::ForegroundSettings{}.refineProbationSegments), seven = segmentsToFine(7);
    CAPTURE(one, seven);
    CHECK(aec::ForegroundSettings{}.refineProbationSegments == 1);
    CHECK(one == 3);
    CHECK(seven == one + 6);
}
