// SPDX-License-Identifier: GPL-3.0-or-later
// [gpu][kalman] tests: the batched GPU Kalman filter against its CPU twin (dsp::Pbfdkf), stream by stream:
// different rooms, levels and far ends in one batch, awkward lengths (taps not a multiple of the block),
// the smallest and largest block sizes, paused streams, non-finite input, and call splits.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "dsp/Pbfdkf.h"
#include "kalman/GpuBatchedPbfdkf.h"
#include "support/Signals.h"

using quell::dsp::Pbfdkf;
using quell::dsp::PbfdkfSettings;
using quell::gpu::GpuBatchedPbfdkf;

namespace {

// Streams one after another (stream s at s * samples): a far end (coloured or white noise, a level per
// stream), its echo through a decaying random path per stream, noise at -80 dB, and for odd streams a
// near-end burst (double talk) in the second third.
struct Batch {
    std::vector<float> mic, ref;
    std::size_t samples = 0;
    int streams = 0;
};

Batch makeBatch(int streams, std::size_t samples, int pathTaps, std::uint32_t seed)
{
    Batch b;
    b.samples = samples;
    b.streams = streams;
    b.mic.resize(static_cast<std::size_t>(streams) * samples);
    b.ref.resize(b.mic.size());
    for (int s = 0; s < streams; ++s) {
        const auto k = seed + 17u * static_cast<std::uint32_t>(s);
        const double level = 0.05 * std::pow(2.0, s % 4);
        const auto x = (s % 3 == 2) ? quell::test::whiteNoise(samples, k, level) : quell::test::colouredNoise(samples, k, level);
        const auto h = quell::test::randomSystem(static_cast<std::size_t>(pathTaps), k + 1, pathTaps / (4.0 + s % 5));
        const auto y = quell::test::convolve(x, h);
        const auto noise = quell::test::whiteNoise(samples, k + 2, 1e-4);
        const auto near = quell::test::colouredNoise(samples, k + 3, 0.3 * level);
        for (std::size_t n = 0; n < samples; ++n) {
            const bool talk = (s % 2 == 1) && n > samples / 3 && n < 2 * samples / 3;
            const std::size_t at = static_cast<std::size_t>(s) * samples + n;
            b.ref[at] = static_cast<float>(x[n]);
            b.mic[at] = static_cast<float>(0.7 * y[n] + noise[n] + (talk ? near[n] : 0.0));
        }
    }
    return b;
}

// The CPU twin on stream s; adaptation off for the first `pausedSamples` samples.
std::vector<float> cpuStream(const PbfdkfSettings& settings, const Batch& b, int s, std::size_t pausedSamples = 0,
                             quell::dsp::RlsHealth* health = nullptr)
{
    Pbfdkf f;
    f.prepare(settings);
    const std::size_t at = static_cast<std::size_t>(s) * b.samples;
    std::vector<float> out(b.samples);
    f.setAdaptation(pausedSamples == 0);
    f.process({b.mic.data() + at, pausedSamples}, {b.ref.data() + at, pausedSamples}, {out.data(), pausedSamples});
    f.setAdaptation(true);
    const std::size_t rest = b.samples - pausedSamples;
    f.process({b.mic.data() + at + pausedSamples, rest}, {b.ref.data() + at + pausedSamples, rest}, {out.data() + pausedSamples, rest});
    if (health != nullptr)
        *health = f.health();
    return out;
}

double energy(const float* x, std::size_t n)
{
    double e = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        e += double(x[i]) * x[i];
    return e;
}

// Echo reduction over the last quarter (the odd streams' double talk is over by then).
double erleDb(const float* mic, const float* out, std::size_t samples)
{
    const std::size_t from = samples - samples / 4;
    return 10.0 * std::log10(energy(mic + from, samples / 4) / std::max(energy(out + from, samples / 4), 1e-30));
}

} // namespace

TEST_CASE("Batched GPU Kalman filter gives every stream its CPU twin's output", "[gpu][kalman]")
{
    struct Case {
        int taps, blockSize, streams, pathTaps;
    };
    // 4096 taps (the default tail, B = 128); 1000 taps (B = 64, the last partition 40 taps long); the
    // smallest block (16: fewer points than a warp has threads) and the largest (256).
    const Case cases[] = {{4096, 0, 6, 3000}, {1000, 0, 5, 700}, {200, 16, 3, 150}, {2048, 256, 3, 1500}};
    for (const Case& c : cases) {
        PbfdkfSettings settings;
        settings.taps = c.taps;
        settings.blockSize = c.blockSize;
        GpuBatchedPbfdkf gpu;
        gpu.prepare(settings, c.streams, 50);
        const std::size_t block = static_cast<std::size_t>(gpu.blockSize());
        const std::size_t samples = (40000 / block) * block;   // 2.5 s at 16 kHz, whole blocks, several chunks
        const Batch b = makeBatch(c.streams, samples, c.pathTaps, 100u + static_cast<std::uint32_t>(c.taps));
        std::vector<float> out(b.mic.size());
        gpu.process(b.mic.data(), b.ref.data(), out.data(), samples);
        const auto health = gpu.health();
        for (int s = 0; s < c.streams; ++s) {
            const auto expected = cpuStream(settings, b, s);
            const float* got = out.data() + static_cast<std::size_t>(s) * samples;
            const float* mic = b.mic.data() + static_cast<std::size_t>(s) * samples;
            double diff = 0.0;
            for (std::size_t n = 0; n < samples; ++n)
                diff += (double(got[n]) - expected[n]) * (double(got[n]) - expected[n]);
            const double relative = std::sqrt(diff / energy(mic, samples));
            const double erleGpu = erleDb(mic, got, samples), erleCpu = erleDb(mic, expected.data(), samples);
            std::printf("kalman N=%d B=%zu stream %d: |e_gpu - e_cpu| / |d| = %.2e, ERLE GPU %.2f dB, CPU %.2f dB\n", c.taps, block, s,
                        relative, erleGpu, erleCpu);
            INFO("taps " << c.taps << ", block " << block << ", stream " << s);
            CHECK(relative < 1e-3);
            CHECK(std::abs(erleGpu - erleCpu) < 0.5);
            CHECK(erleCpu > 10.0);   // the comparison is of a filter that learnt something
            CHECK(health[static_cast<std::size_t>(s)].reinitialisations == 0);
        }
    }
}

TEST_CASE("Batched GPU Kalman filter: a call split into blocks gives the same samples as one call", "[gpu][kalman]")
{
    PbfdkfSettings settings;
    settings.taps = 1024;
    const int streams = 4;
    GpuBatchedPbfdkf whole, split;
    whole.prepare(settings, streams, 64);
    split.prepare(settings, streams, 1);   // one block per chunk
    const std::size_t B = static_cast<std::size_t>(whole.blockSize()), samples = 300 * B;
    const Batch b = makeBatch(streams, samples, 800, 7u);
    std::vector<float> a(b.mic.size()), c(b.mic.size());
    whole.process(b.mic.data(), b.ref.data(), a.data(), samples);
    // The split run in calls of 1, 5 and 294 blocks: each call takes its own stream-major slices.
    std::size_t done = 0;
    for (const std::size_t blocks : {std::size_t{1}, std::size_t{5}, std::size_t{294}}) {
        const std::size_t n = blocks * B;
        std::vector<float> mic(static_cast<std::size_t>(streams) * n), ref(mic.size()), out(mic.size());
        for (int s = 0; s < streams; ++s)
            for (std::size_t i = 0; i < n; ++i) {
                mic[static_cast<std::size_t>(s) * n + i] = b.mic[static_cast<std::size_t>(s) * samples + done + i];
                ref[static_cast<std::size_t>(s) * n + i] = b.ref[static_cast<std::size_t>(s) * samples + done + i];
            }
        split.process(mic.data(), ref.data(), out.data(), n);
        for (int s = 0; s < streams; ++s)
            for (std::size_t i = 0; i < n; ++i)
                c[static_cast<std::size_t>(s) * samples + done + i] = out[static_cast<std::size_t>(s) * n + i];
        done += n;
    }
    REQUIRE(done == samples);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        mismatches += a[i] != c[i] ? 1 : 0;
    CHECK(mismatches == 0);
    REQUIRE_THROWS_AS(whole.process(b.mic.data(), b.ref.data(), a.data(), B + 1), std::invalid_argument);
}

TEST_CASE("Batched GPU Kalman filter: paused streams and non-finite input as the CPU twin has them", "[gpu][kalman]")
{
    PbfdkfSettings settings;
    settings.taps = 1024;
    const int streams = 3;
    GpuBatchedPbfdkf gpu;
    gpu.prepare(settings, streams, 32);
    const std::size_t B = static_cast<std::size_t>(gpu.blockSize()), samples = 500 * B, pausedPart = 100 * B;
    Batch b = makeBatch(streams, samples, 700, 3u);
    // Stream 2 carries a NaN in its microphone and an infinity in its far end.
    b.mic[2 * samples + 5000] = std::numeric_limits<float>::quiet_NaN();
    b.ref[2 * samples + 9000] = std::numeric_limits<float>::infinity();
    std::vector<float> out(b.mic.size());
    // Stream 1 holds still for its first 100 blocks; the others adapt throughout.
    const unsigned char pausedFlags[streams] = {1, 0, 1}, adaptingFlags[streams] = {1, 1, 1};
    gpu.process(b.mic.data(), b.ref.data(), out.data(), samples, nullptr);   // warm nothing: reset below
    gpu.reset();
    {
        std::vector<float> mic(static_cast<std::size_t>(streams) * pausedPart), ref(mic.size()), part(mic.size());
        std::vector<float> mic2(static_cast<std::size_t>(streams) * (samples - pausedPart)), ref2(mic2.size()), part2(mic2.size());
        for (int s = 0; s < streams; ++s) {
            const std::size_t at = static_cast<std::size_t>(s) * samples;
            std::copy_n(b.mic.begin() + static_cast<std::ptrdiff_t>(at), pausedPart, mic.begin() + static_cast<std::ptrdiff_t>(s * pausedPart));
            std::copy_n(b.ref.begin() + static_cast<std::ptrdiff_t>(at), pausedPart, ref.begin() + static_cast<std::ptrdiff_t>(s * pausedPart));
            const std::size_t rest = samples - pausedPart;
            std::copy_n(b.mic.begin() + static_cast<std::ptrdiff_t>(at + pausedPart), rest, mic2.begin() + static_cast<std::ptrdiff_t>(s * rest));
            std::copy_n(b.ref.begin() + static_cast<std::ptrdiff_t>(at + pausedPart), rest, ref2.begin() + static_cast<std::ptrdiff_t>(s * rest));
        }
        gpu.process(mic.data(), ref.data(), part.data(), pausedPart, pausedFlags);
        gpu.process(mic2.data(), ref2.data(), part2.data(), samples - pausedPart, adaptingFlags);
        for (int s = 0; s < streams; ++s) {
            const std::size_t rest = samples - pausedPart;
            std::copy_n(part.begin() + static_cast<std::ptrdiff_t>(s * pausedPart), pausedPart, out.begin() + static_cast<std::ptrdiff_t>(s * samples));
            std::copy_n(part2.begin() + static_cast<std::ptrdiff_t>(s * rest), rest, out.begin() + static_cast<std::ptrdiff_t>(s * samples + pausedPart));
        }
    }
    const auto health = gpu.health();
    for (int s = 0; s < streams; ++s) {
        quell::dsp::RlsHealth cpuHealth;
        const auto expected = cpuStream(settings, b, s, s == 1 ? pausedPart : 0, &cpuHealth);
        const float* got = out.data() + static_cast<std::size_t>(s) * samples;
        const float* mic = b.mic.data() + static_cast<std::size_t>(s) * samples;
        double diff = 0.0, reference = 0.0;
        for (std::size_t n = 0; n < samples; ++n) {
            const float d = std::isfinite(mic[n]) ? mic[n] : 0.0f;
            diff += (double(got[n]) - expected[n]) * (double(got[n]) - expected[n]);
            reference += double(d) * d;
        }
        const double relative = std::sqrt(diff / reference);
        std::printf("kalman paused/non-finite stream %d: |e_gpu - e_cpu| / |d| = %.2e, paused %llu (CPU %llu), sanitised %llu (CPU %llu)\n", s,
                    relative, static_cast<unsigned long long>(health[static_cast<std::size_t>(s)].pausedSamples),
                    static_cast<unsigned long long>(cpuHealth.pausedSamples),
                    static_cast<unsigned long long>(health[static_cast<std::size_t>(s)].sanitisedSamples),
                    static_cast<unsigned long long>(cpuHealth.sanitisedSamples));
        INFO("stream " << s);
        CHECK(relative < 1e-3);
        CHECK(health[static_cast<std::size_t>(s)].pausedSamples == cpuHealth.pausedSamples);
        CHECK(health[static_cast<std::size_t>(s)].sanitisedSamples == cpuHealth.sanitisedSamples);
        CHECK(health[static_cast<std::size_t>(s)].reinitialisations == cpuHealth.reinitialisations);
        bool finite = true;
        for (std::size_t n = 0; n < samples; ++n)
            finite = finite && std::isfinite(got[n]);
        CHECK(finite);
    }
    CHECK(health[1].pausedSamples == pausedPart);
    CHECK(health[2].sanitisedSamples == 2);
}

TEST_CASE("Batched GPU Kalman filter: a held stream sits calls out and goes on as its CPU twin given only its samples",
          "[gpu][kalman][multistream]")
{
    // 1000 taps (B = 64, 16 partitions) in calls of two blocks at a host pitch past the call: stream 0
    // never held, stream 1 held for one call, three, and seventeen (34 blocks: the batch's ring goes round
    // twice past it), stream 2 every fifth call from the first. Each stream's outputs over the calls it took
    // part in against the CPU twin given only those samples.
    PbfdkfSettings settings;
    settings.taps = 1000;
    constexpr int streams = 3;
    GpuBatchedPbfdkf gpu;
    gpu.prepare(settings, streams, 4);
    gpu.mirrorState();
    REQUIRE(gpu.partitions() == 16);
    const std::size_t B = static_cast<std::size_t>(gpu.blockSize()), call = 2 * B, pitch = call + 40, calls = 300;
    const Batch b = makeBatch(streams, call * calls, 700, 400u);
    auto heldAt = [](int stream, std::size_t c) {
        if (stream == 1)
            return c == 2 || (c >= 10 && c < 13) || (c >= 50 && c < 67);
        return stream == 2 && c % 5 == 0;
    };
    std::vector<float> mic(streams * pitch), ref(streams * pitch), out(streams * pitch);
    std::vector<unsigned char> held(streams);
    std::vector<std::vector<float>> got(streams);
    std::vector<std::size_t> next(streams, 0);
    for (std::size_t c = 0; c < calls; ++c) {
        for (int i = 0; i < streams; ++i) {
            held[i] = heldAt(i, c) ? 1 : 0;
            const float* m = b.mic.data() + static_cast<std::size_t>(i) * b.samples + next[i];
            const float* r = b.ref.data() + static_cast<std::size_t>(i) * b.samples + next[i];
            for (std::size_t t = 0; t < call; ++t) {
                // Read, a held stream's staging would count as sanitised and spoil its state.
                mic[i * pitch + t] = held[i] ? std::numeric_limits<float>::quiet_NaN() : m[t];
                ref[i * pitch + t] = held[i] ? std::numeric_limits<float>::quiet_NaN() : r[t];
            }
        }
        gpu.process(mic.data(), ref.data(), out.data(), call, pitch, nullptr, held.data());
        for (int i = 0; i < streams; ++i)
            if (!held[i]) {
                got[i].insert(got[i].end(), out.begin() + static_cast<std::ptrdiff_t>(i * pitch),
                              out.begin() + static_cast<std::ptrdiff_t>(i * pitch + call));
                next[i] += call;
            }
    }
    CHECK(next[1] == (calls - 21) * call);
    CHECK(next[2] == (calls - 60) * call);
    for (int i = 0; i < streams; ++i) {
        const std::size_t n = next[i], at = static_cast<std::size_t>(i) * b.samples;
        Pbfdkf f;
        f.prepare(settings);
        std::vector<float> expected(n);
        f.process({b.mic.data() + at, n}, {b.ref.data() + at, n}, expected);
        double diff = 0.0;
        for (std::size_t t = 0; t < n; ++t)
            diff += (double(got[i][t]) - expected[t]) * (double(got[i][t]) - expected[t]);
        const double relative = std::sqrt(diff / energy(b.mic.data() + at, n));
        const double erleGpu = erleDb(b.mic.data() + at, got[i].data(), n), erleCpu = erleDb(b.mic.data() + at, expected.data(), n);
        std::printf("kalman held stream %d: |e_gpu - e_cpu| / |d| = %.2e over %zu samples, ERLE GPU %.2f dB, CPU %.2f dB\n", i, relative, n,
                    erleGpu, erleCpu);
        INFO("stream " << i);
        CHECK(relative < 1e-3);
        CHECK(std::abs(erleGpu - erleCpu) < 0.5);
        CHECK(erleCpu > 10.0);
        const quell::dsp::RlsHealth h = gpu.mirroredHealth(i);
        CHECK(h.sanitisedSamples == 0);
        CHECK(h.pausedSamples == f.health().pausedSamples);
    }
}

TEST_CASE("Batched GPU Kalman filter refuses settings it cannot run", "[gpu][kalman]")
{
    GpuBatchedPbfdkf gpu;
    PbfdkfSettings stereo;
    stereo.channels = 2;
    CHECK_THROWS_AS(gpu.prepare(stereo, 4), std::invalid_argument);
    PbfdkfSettings longBlocks;
    longBlocks.blockSize = 512;
    CHECK_THROWS_AS(gpu.prepare(longBlocks, 4), std::invalid_argument);
    CHECK_THROWS_AS(gpu.prepare(PbfdkfSettings{}, 0), std::invalid_argument);
}

TEST_CASE("Batched GPU Kalman filter: per-stream restarts and resets, and the taps it brings back, as the CPU twin's",
          "[gpu][kalman]")
{
    // Three streams in calls staged at a pitch longer than the call (a server's buffers): after 200 blocks
    // stream 0's uncertainty restarts, stream 1 starts again as a new filter, stream 2 goes on; each
    // stream's output and taps against a CPU filter given the same controls at the same sample.
    PbfdkfSettings settings;
    settings.taps = 1000;
    settings.blockSize = 32;   // the many-calls batch's block at 16 kHz
    const int streams = 3;
    GpuBatchedPbfdkf gpu;
    gpu.prepare(settings, streams, 16);
    gpu.mirrorState();
    const std::size_t B = 32, half = 200 * B, samples = 2 * half, call = 5 * B, pitch = call + 48;
    const Batch b = makeBatch(streams, samples, 700, 41u);
    std::vector<float> out(b.mic.size());
    std::vector<float> mic(static_cast<std::size_t>(streams) * pitch), ref(mic.size()), got(mic.size());
    const unsigned char adapting[streams] = {1, 1, 1};
    for (std::size_t at = 0; at < samples; at += call) {
        if (at == half) {
            const unsigned char controls[streams] = {GpuBatchedPbfdkf::RestartUncertainty, GpuBatchedPbfdkf::Reset, GpuBatchedPbfdkf::Keep};
            gpu.controlStreams(controls);
        }
        for (int s = 0; s < streams; ++s) {
            std::copy_n(b.mic.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * samples + at), call,
                        mic.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * pitch));
            std::copy_n(b.ref.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * samples + at), call,
                        ref.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * pitch));
        }
        gpu.process(mic.data(), ref.data(), got.data(), call, pitch, adapting);
        for (int s = 0; s < streams; ++s)
            std::copy_n(got.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * pitch), call,
                        out.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * samples + at));
    }
    for (int s = 0; s < streams; ++s) {
        Pbfdkf cpu;
        cpu.prepare(settings);
        const std::size_t at = static_cast<std::size_t>(s) * samples;
        std::vector<float> expected(samples);
        cpu.process({b.mic.data() + at, half}, {b.ref.data() + at, half}, {expected.data(), half});
        if (s == 0)
            cpu.restartUncertainty();
        if (s == 1)
            cpu.reset();
        cpu.process({b.mic.data() + at + half, half}, {b.ref.data() + at + half, half}, {expected.data() + half, half});
        const float* g = out.data() + at;
        double diff = 0.0;
        for (std::size_t n = half; n < samples; ++n)
            diff += (double(g[n]) - expected[n]) * (double(g[n]) - expected[n]);
        const double relative = std::sqrt(diff / energy(b.mic.data() + at + half, half));
        const std::vector<float> taps(gpu.mirroredTaps(s), gpu.mirroredTaps(s) + settings.taps);
        const std::vector<float> cpuTaps(cpu.weights().begin(), cpu.weights().end());
        const double tapsRelative = quell::test::relativeL2(std::span<const float>(taps), std::span<const float>(cpuTaps));
        const double erle = erleDb(b.mic.data() + at, g, samples);
        std::printf("kalman controls stream %d: second half |e_gpu - e_cpu| / |d| = %.2e, taps %.2e, ERLE %.1f dB\n", s, relative,
                    tapsRelative, erle);
        INFO("stream " << s);
        CHECK(relative < 1e-3);
        CHECK(tapsRelative < 1e-3);
        CHECK(erle > 10.0);
        CHECK(gpu.mirroredHealth(s).reinitialisations == cpu.health().reinitialisations);
    }
    // The reset did something: stream 1's second half is far from a filter that went on.
    {
        const std::vector<float> continued = cpuStream(settings, b, 1);
        const float* g = out.data() + samples;
        double diff = 0.0;
        for (std::size_t n = half; n < samples; ++n)
            diff += (double(g[n]) - continued[n]) * (double(g[n]) - continued[n]);
        const double fromContinued = std::sqrt(diff / energy(b.mic.data() + samples + half, half));
        std::printf("kalman controls stream 1: second half against a filter not reset %.2e\n", fromContinued);
        CHECK(fromContinued > 1e-2);
    }
    CHECK_THROWS_AS(gpu.process(mic.data(), ref.data(), got.data(), call, call - 1, adapting), std::invalid_argument);
}
