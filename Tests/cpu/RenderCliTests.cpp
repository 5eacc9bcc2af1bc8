// SPDX-License-Identifier: GPL-3.0-or-later
// quell-render as a user runs it: a real process, real files, exit codes and messages.
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <sndfile.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include "aec/EchoCanceller.h"
#include "dsp/BiquadCascade.h"
#include "io/WavFile.h"
#include "support/Signals.h"

#if defined(QUELL_HAS_CUDA)
#include "common/GpuDevice.h"
#endif

namespace fs = std::filesystem;
using namespace quell;

namespace {

struct Result {
    int exitCode;
    std::string out, err;
};

class TempDir {
public:
    TempDir()
    {
        std::string tmpl = (fs::temp_directory_path() / "quell-render-test-XXXXXX").string();
        path_ = ::mkdtemp(tmpl.data());
    }
    ~TempDir() { fs::remove_all(path_); }
    std::string operator/(const std::string& name) const { return (fs::path(path_) / name).string(); }
    // Every file in the folder, to check that a failed run left nothing (no partial outputs).
    std::vector<std::string> files() const
    {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }

private:
    std::string path_;
};

std::string slurp(const std::string& path)
{
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// ref.wav, two channels at 16 kHz, and mic.wav: each channel through a 48-tap path of its own (seeds
// pathSeed and pathSeed + 1), summed.
void writeStereoEcho(const TempDir& dir, const std::vector<double>& left, const std::vector<double>& right, std::uint32_t pathSeed)
{
    const auto yl = test::convolve(left, test::randomSystem(48, pathSeed, 8.0));
    const auto yr = test::convolve(right, test::randomSystem(48, pathSeed + 1, 8.0));
    io::AudioFormat f{16000, 2, SF_FORMAT_WAV | SF_FORMAT_FLOAT, "FLOAT"};
    std::vector<std::vector<float>> ref(2), mic(1);
    for (std::size_t i = 0; i < left.size(); ++i) {
        ref[0].push_back(static_cast<float>(left[i]));
        ref[1].push_back(static_cast<float>(right[i]));
        mic[0].push_back(static_cast<float>(yl[i] + yr[i]));
    }
    io::writeAudioAtomically(dir / "ref.wav", f, ref);
    f.channels = 1;
    io::writeAudioAtomically(dir / "mic.wav", f, mic);
}

// The metrics JSON's steady-state ERLE, in dB; -1 where it has none (not measured).
double steadyStateErleDb(const std::string& json)
{
    const auto pos = json.find("\"steady_state_db\": ");
    return pos == std::string::npos ? -1.0 : std::atof(json.c_str() + pos + 19);
}

Result render(const TempDir& dir, const std::string& args)
{
    const std::string out = dir / "stdout.txt", err = dir / "stderr.txt";
    const std::string cmd = std::string(QUELL_RENDER_PATH) + " " + args + " >" + out + " 2>" + err + " </dev/null";
    const int status = std::system(cmd.c_str());
    Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
    fs::remove(out);
    fs::remove(err);
    return r;
}

// Far end: white noise; microphone: its echo through a short random room plus a little noise.
void writePair(const std::string& mic, const std::string& ref, int rate, std::size_t frames, int format,
               int micChannels = 1, int refChannels = 1)
{
    const auto x = test::whiteNoise(frames, 1, 0.1);
    const auto h = test::randomSystem(64, 2, 16.0);
    auto d = test::convolve(x, h);
    const auto v = test::whiteNoise(frames, 3, 1e-4);
    io::AudioFormat f;
    f.sampleRate = rate;
    f.sndfileFormat = format;
    std::vector<std::vector<float>> m(static_cast<std::size_t>(micChannels)), r(static_cast<std::size_t>(refChannels));
    for (auto& c : m) for (std::size_t i = 0; i < frames; ++i) c.push_back(static_cast<float>(0.5 * d[i] + v[i]));
    for (auto& c : r) for (std::size_t i = 0; i < frames; ++i) c.push_back(static_cast<float>(x[i]));
    f.channels = micChannels;
    io::writeAudioAtomically(mic, f, m);
    f.channels = refChannels;
    io::writeAudioAtomically(ref, f, r);
}

constexpr int kWav16 = SF_FORMAT_WAV | SF_FORMAT_PCM_16;

void expectFailure(const TempDir& dir, const std::string& args, const std::string& message, const std::vector<std::string>& before)
{
    const Result r = render(dir, args);
    INFO("args: " << args << "\nstderr: " << r.err);
    CHECK(r.exitCode == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1); // one line
    CHECK(dir.files() == before);                              // no OUT.wav, no partial file
}

} // namespace

TEST_CASE("quell-render rejects bad input with one clear line, exit 2 and no output", "[render][cli]")
{
    TempDir dir;
    const std::string mic = dir / "mic.wav", ref = dir / "ref.wav", out = dir / "out.wav";
    writePair(mic, ref, 16000, 8000, kWav16);
    {
        std::ofstream(dir / "notes.txt") << "this is not audio\n";
        std::ofstream(dir / "empty.wav");
    }
    fs::create_directory(dir / "folder.wav");
    writePair(dir / "mic48.wav", dir / "ref48.wav", 48000, 2400, kWav16);
    writePair(dir / "mic3.wav", dir / "ref3.wav", 16000, 800, kWav16, 3, 3);
    {   // a float WAV holding a NaN
        io::AudioFormat f{16000, 1, SF_FORMAT_WAV | SF_FORMAT_FLOAT, "FLOAT"};
        std::vector<std::vector<float>> c{std::vector<float>(1000, 0.1f)};
        c[0][500] = std::numeric_limits<float>::quiet_NaN();
        io::writeAudioAtomically(dir / "nan.wav", f, c);
        c[0][500] = std::numeric_limits<float>::infinity();
        io::writeAudioAtomically(dir / "inf.wav", f, c);
    }
    {   // a valid WAV header with no frames
        SF_INFO info{};
        info.samplerate = 16000;
        info.channels = 1;
        info.format = kWav16;
        sf_close(sf_open((dir / "noframes.wav").c_str(), SFM_WRITE, &info));
    }
    const auto before = dir.files();
    const std::string io = " --out " + out;

    SECTION("missing file") { expectFailure(dir, "--mic " + dir / "nope.wav --ref " + ref + io, "nope.wav: cannot open", before); }
    SECTION("unreadable file (a directory)") { expectFailure(dir, "--mic " + dir / "folder.wav --ref " + ref + io, "folder.wav: is a directory", before); }
    SECTION("not a WAV") { expectFailure(dir, "--mic " + dir / "notes.txt --ref " + ref + io, "notes.txt: not a WAV", before); }
    SECTION("empty file") { expectFailure(dir, "--mic " + mic + " --ref " + dir / "empty.wav" + io, "empty.wav: empty file", before); }
    SECTION("WAV with no frames") { expectFailure(dir, "--mic " + dir / "noframes.wav --ref " + ref + io, "noframes.wav: empty file", before); }
    SECTION("sample-rate mismatch") { expectFailure(dir, "--mic " + mic + " --ref " + dir / "ref48.wav" + io, "sample rate 48000 Hz differs", before); }
    SECTION("too many microphone channels") { expectFailure(dir, "--mic " + dir / "mic3.wav --ref " + ref + io, "mic3.wav: has 3 channels; the microphone may have 1 or 2", before); }
    SECTION("too many reference channels") { expectFailure(dir, "--mic " + mic + " --ref " + dir / "ref3.wav" + io, "ref3.wav: has 3 channels; the far-end reference may have 1 or 2", before); }
    SECTION("NaN samples") { expectFailure(dir, "--mic " + dir / "nan.wav --ref " + ref + io, "nan.wav: contains NaN samples (first at frame 500", before); }
    SECTION("Inf samples") { expectFailure(dir, "--mic " + mic + " --ref " + dir / "inf.wav" + io, "inf.wav: contains Inf samples", before); }
    SECTION("taps out of range") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --taps 0", "--taps: expected an integer from 8 to 8192, got '0'", before); }
    SECTION("taps not a number") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --taps lots", "--taps: expected an integer", before); }
    SECTION("lambda out of range") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --lambda 1.5", "--lambda: expected a number from 0.9 to 1, got '1.5'", before); }
    SECTION("Kalman block not a power of two") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --kalman-block 48", "--kalman-block must be a power of two (got 48)", before); }
    SECTION("Kalman block out of range") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --kalman-block 8", "--kalman-block: expected an integer from 16 to 4096, got '8'", before); }
    SECTION("suppression out of range") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --suppression 61", "--suppression: expected a number from 0 to 60, got '61'", before); }
    SECTION("OUT is the microphone") { expectFailure(dir, "--mic " + mic + " --ref " + ref + " --out " + mic, "would overwrite an input file", before); }
    SECTION("OUT is the reference, spelled differently") { expectFailure(dir, "--mic " + mic + " --ref " + ref + " --out " + dir / "./ref.wav", "would overwrite an input file", before); }
    SECTION("unknown backend") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --backend tpu", "--backend: expected cpu, gpu or auto", before); }
    SECTION("missing arguments") { expectFailure(dir, "--mic " + mic, "--mic, --ref and --out are required", before); }
    SECTION("a flag given a value") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --quiet=yes", "--quiet takes no value", before); }
    SECTION("an argument after --") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " -- extra", "unexpected argument 'extra' after --", before); }
    SECTION("--opt= with nothing") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --taps=", "--taps: missing value", before); }
    SECTION("OUT's folder does not exist") { expectFailure(dir, "--mic " + mic + " --ref " + ref + " --out " + dir / "no/out.wav", "the folder", before); }
    SECTION("OUT's extension names no format") { expectFailure(dir, "--mic " + mic + " --ref " + ref + " --out " + dir / "out.mp4", "names no format", before); }
    SECTION("the metrics' folder does not exist: no OUT either") { expectFailure(dir, "--mic " + mic + " --ref " + ref + io + " --metrics " + dir / "no/m.json", "the folder", before); }
}

TEST_CASE("quell-render on no GPU: --backend gpu is an error, auto falls back and says so", "[render][cli]")
{
    bool gpu = false;
#if defined(QUELL_HAS_CUDA)
    gpu = gpu::queryDevice().available;
#endif
    if (gpu) {
        WARN("a GPU is present: the no-GPU behaviour cannot be checked here");
        return;
    }
    TempDir dir;
    const std::string mic = dir / "mic.wav", ref = dir / "ref.wav", out = dir / "out.wav";
    writePair(mic, ref, 16000, 8000, kWav16);
    const auto before = dir.files();
    expectFailure(dir, "--mic " + mic + " --ref " + ref + " --out " + out + " --backend gpu", "--backend gpu: no usable GPU", before);

    const Result r = render(dir, "--mic " + mic + " --ref " + ref + " --out " + out + " --backend auto --taps 64");
    INFO(r.err);
    CHECK(r.exitCode == 0);
    CHECK_THAT(r.err, Catch::Contains("--backend auto: using the CPU"));
    CHECK(fs::exists(out));
}

TEST_CASE("quell-render keeps the input's rate, format and length, and the microphone's length for unequal files", "[render][cli]")
{
    struct Case { int rate; int format; const char* subtype; };
    const std::vector<Case> cases{
        {16000, SF_FORMAT_WAV | SF_FORMAT_PCM_16, "PCM_16"},
        {44100, SF_FORMAT_WAV | SF_FORMAT_PCM_24, "PCM_24"},
        {48000, SF_FORMAT_WAV | SF_FORMAT_PCM_32, "PCM_32"},
        {32000, SF_FORMAT_WAV | SF_FORMAT_FLOAT, "FLOAT"},
        {22050, SF_FORMAT_WAV | SF_FORMAT_PCM_16, "PCM_16"},
    };
    for (const Case& c : cases) {
        TempDir dir;
        const std::string mic = dir / "mic.wav", ref = dir / "ref.wav", out = dir / "out.wav", metrics = dir / "m.json";
        const std::size_t frames = static_cast<std::size_t>(c.rate) * 3 / 2;
        writePair(mic, ref, c.rate, frames, c.format);
        const Result r = render(dir, "--mic " + mic + " --ref " + ref + " --out " + out + " --metrics " + metrics + " --taps 128 --backend cpu");
        INFO(c.rate << " " << c.subtype << "\n" << r.err);
        REQUIRE(r.exitCode == 0);
        const io::AudioData o = io::readAudio(out);
        CHECK(o.format.sampleRate == c.rate);
        CHECK(o.format.subtypeName == c.subtype);
        CHECK(o.frames() == frames);
        CHECK_THAT(r.out, Catch::Contains("real-time factor"));
        CHECK_THAT(r.out, Catch::Contains("ERLE"));
        const std::string json = slurp(metrics);
        CHECK_THAT(json, Catch::Contains("\"per_frame_db\": ["));
        CHECK_THAT(json, Catch::Contains("\"taps\": 128"));
        CHECK_THAT(json, Catch::Contains("\"wall_seconds\""));
        // Echo of white noise through a 64-tap room: the canceller removes most of it at any file rate.
        CHECK(steadyStateErleDb(json) > 15.0);
        CHECK(dir.files() == std::vector<std::string>{"m.json", "mic.wav", "out.wav", "ref.wav"});
    }
    // Unequal lengths: the output keeps the microphone's length either way, and the user is told.
    TempDir dir;
    writePair(dir / "mic.wav", dir / "long.wav", 16000, 8000, kWav16);
    writePair(dir / "short.wav", dir / "ref.wav", 16000, 6000, kWav16);
    Result r = render(dir, "--mic " + dir / "mic.wav --ref " + dir / "ref.wav --out " + dir / "out.wav --taps 64");
    CHECK(r.exitCode == 0);
    CHECK_THAT(r.err, Catch::Contains("the far end is taken as silent after its end"));
    CHECK(io::readAudio(dir / "out.wav").frames() == 8000);
    r = render(dir, "--mic=" + dir / "short.wav --ref=" + dir / "long.wav --out=" + dir / "out2.wav --taps=64 --");
    CHECK(r.exitCode == 0);
    CHECK_THAT(r.err, Catch::Contains("its last 2000 are not used"));
    CHECK(io::readAudio(dir / "out2.wav").frames() == 6000);
}

TEST_CASE("quell-render writes the container OUT's extension names", "[render][cli]")
{
    TempDir dir;
    writePair(dir / "mic.wav", dir / "ref.wav", 16000, 8000, SF_FORMAT_WAV | SF_FORMAT_FLOAT);
    struct Case {
        const char* name;
        int major;
        const char* subtype;
    };
    for (const Case& c : {Case{"out.flac", SF_FORMAT_FLAC, "PCM_24"}, Case{"out.WAV", SF_FORMAT_WAV, "FLOAT"},
                          Case{"out.aiff", SF_FORMAT_AIFF, "FLOAT"}}) {
        INFO(c.name);
        const Result r = render(dir, "--mic " + dir / "mic.wav --ref " + dir / "ref.wav --out " + dir / c.name + " --taps 64");
        REQUIRE(r.exitCode == 0);
        const io::AudioData o = io::readAudio(dir / c.name);
        CHECK((o.format.sndfileFormat & SF_FORMAT_TYPEMASK) == c.major);
        CHECK(o.format.subtypeName == c.subtype);
        CHECK(o.frames() == 8000);
    }
    // The same render twice is the same file, byte for byte (no time stamp in it).
    render(dir, "--mic " + dir / "mic.wav --ref " + dir / "ref.wav --out " + dir / "a.wav --taps 64 --backend cpu");
    render(dir, "--mic " + dir / "mic.wav --ref " + dir / "ref.wav --out " + dir / "b.wav --taps 64 --backend cpu");
    CHECK(slurp(dir / "a.wav") == slurp(dir / "b.wav"));
}

TEST_CASE("quell-render reads '-' from standard input and writes '-' to standard output", "[render][cli]")
{
    TempDir dir;
    writePair(dir / "mic.flac", dir / "ref.wav", 16000, 8000, SF_FORMAT_FLAC | SF_FORMAT_PCM_16);
    const std::string common = " --taps 64 --backend cpu";
    REQUIRE(render(dir, "--mic " + dir / "mic.flac --ref " + dir / "ref.wav --out " + dir / "file.wav" + common).exitCode == 0);

    // Through real pipes (not seekable): the FLAC microphone in, WAV out, the summary on standard error.
    const std::string cmd = "cat " + dir / "mic.flac" + " | " + QUELL_RENDER_PATH + " --mic - --ref " + dir / "ref.wav"
                            + " --out - --metrics " + dir / "m.json" + common + " 2>" + dir / "err.txt" + " | cat >" + dir / "piped.wav";
    const int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    const std::string piped = slurp(dir / "piped.wav");
    CHECK(piped.size() > 16000);
    CHECK(piped == slurp(dir / "file.wav"));   // byte for byte the file render: nothing else on stdout
    const std::string err = slurp(dir / "err.txt");
    CHECK_THAT(err, Catch::Contains("wrote standard output (WAV)") && Catch::Contains("ERLE"));
    CHECK_THAT(slurp(dir / "m.json"), Catch::Contains("\"mic\": \"-\""));

    // One file on standard input at most; an empty or foreign stream is a clear error; nothing written.
    auto failsWith = [&](const std::string& input, const std::string& args, const std::string& message) {
        const std::string c = input + " | " + QUELL_RENDER_PATH + " " + args + " >" + dir / "o.txt" + " 2>" + dir / "e.txt";
        const int st = std::system(c.c_str());
        INFO(args << "\nstderr: " << slurp(dir / "e.txt"));
        CHECK(WIFEXITED(st));
        CHECK(WEXITSTATUS(st) == 2);
        CHECK_THAT(slurp(dir / "e.txt"), Catch::Contains(message));
        CHECK(slurp(dir / "o.txt").empty());
        CHECK(!fs::exists(dir / "x.wav"));
    };
    failsWith("cat " + dir / "mic.flac", "--mic - --ref - --out " + dir / "x.wav", "cannot both be '-'");
    failsWith("true", "--mic - --ref " + dir / "ref.wav --out " + dir / "x.wav", "standard input: empty");
    failsWith("echo hello", "--mic - --ref " + dir / "ref.wav --out -", "standard input: not a WAV");
}

TEST_CASE("quell-render output is aligned with its input (latency compensated)", "[render][cli]")
{
    // With a far end of silence there is nothing to cancel: the output must equal the (high-passed)
    // microphone, sample for sample, at every rate - proof that the resampler delay is removed exactly.
    for (const int rate : {16000, 48000}) {
        TempDir dir;
        const std::size_t frames = static_cast<std::size_t>(rate);
        io::AudioFormat f{rate, 1, SF_FORMAT_WAV | SF_FORMAT_FLOAT, "FLOAT"};
        std::vector<std::vector<float>> m{std::vector<float>(frames, 0.0f)}, r{std::vector<float>(frames, 0.0f)};
        for (std::size_t i = 0; i < frames; ++i) // a 1 kHz tone, well inside the canceller's band
            m[0][i] = static_cast<float>(0.3 * std::sin(2.0 * 3.141592653589793 * 1000.0 * static_cast<double>(i) / rate));
        io::writeAudioAtomically(dir / "mic.wav", f, m);
        io::writeAudioAtomically(dir / "ref.wav", f, r);
        const Result res = render(dir, "--mic " + dir / "mic.wav --ref " + dir / "ref.wav --out " + dir / "out.wav --taps 64");
        REQUIRE(res.exitCode == 0);
        const auto o = io::readAudio(dir / "out.wav");
        // The canceller's 40 Hz high-pass shifts a 1 kHz tone's phase by ~3 degrees: apply it here too.
        const dsp::Biquad hp = dsp::butterworthHighPass(aec::EchoCancellerSettings{}.highPassHz, rate);
        dsp::BiquadCascade<double> filter;
        filter.prepare(std::span<const dsp::Biquad>(&hp, 1));
        std::vector<double> expected(m[0].begin(), m[0].end());
        filter.process(expected, expected);
        double err = 0.0, ref = 0.0;
        for (std::size_t i = frames / 4; i < frames * 3 / 4; ++i) {
            err += (o.channels[0][i] - expected[i]) * (o.channels[0][i] - expected[i]);
            ref += expected[i] * expected[i];
        }
        INFO("rate " << rate);
        CHECK(10.0 * std::log10(err / ref) < -40.0);
    }
}

TEST_CASE("quell-render cancels the bundled demo's echo by at least 25 dB on the CPU", "[render][demo]")
{
    TempDir dir;
    const std::string demo = QUELL_DEMO_DIR;
    const Result r = render(dir, "--mic " + demo + "/mic.wav --ref " + demo + "/ref.wav --out " + dir / "out.wav --metrics "
                                     + dir / "m.json --backend cpu");
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    const double erle = steadyStateErleDb(slurp(dir / "m.json"));
    WARN("demo steady-state ERLE " << erle << " dB");
    CHECK(erle >= 25.0);
    CHECK_THAT(r.out, Catch::Contains("ERLE (steady state"));
}

TEST_CASE("quell-render cancels a stereo far end as two channels (and mixes it to mono when asked)", "[render][cli][stereo]")
{
    TempDir dir;
    const std::size_t frames = 48000;   // 3 s at 16 kHz
    writeStereoEcho(dir, test::colouredNoise(frames, 81), test::colouredNoise(frames, 82), 83);
    const auto erleOf = [&](const std::string& extra, Result& r) {
        r = render(dir, "--mic " + dir / "mic.wav --ref " + dir / "ref.wav --out " + dir / "out.wav --metrics " + dir / "m.json"
                            + " --taps 128 --backend cpu --suppression 0" + extra);
        return steadyStateErleDb(slurp(dir / "m.json"));
    };
    Result two, mono;
    const double erleTwo = erleOf("", two), erleMono = erleOf(" --mono-far-end", mono);
    INFO(two.out << two.err << mono.out << mono.err);
    REQUIRE(two.exitCode == 0);
    REQUIRE(mono.exitCode == 0);
    CHECK_THAT(two.out, Catch::Contains("2 far-end channels x 128 taps"));
    CHECK_THAT(mono.out, !Catch::Contains("far-end channels"));
    WARN("stereo far end: ERLE " << erleTwo << " dB as two channels, " << erleMono << " dB mixed to mono");
    CHECK(erleTwo > 25.0);
    CHECK(erleTwo > erleMono + 10.0);
}

TEST_CASE("quell-render measures the echo of a stereo far end whose channels cancel in their mean", "[render][cli][stereo]")
{
    // R = -L through two paths: the loudspeakers play, the mean is silent. The meter judges the far end's
    // activity by its level over the channels (what the loudspeakers play), so it measures; the mean
    // would call the whole file far-end silence.
    TempDir dir;
    const std::size_t frames = 48000;   // 3 s at 16 kHz
    auto left = test::colouredNoise(frames, 85), right = left;
    for (double& v : right)
        v = -v;
    writeStereoEcho(dir, left, right, 86);
    const Result r = render(dir, "--mic " + dir / "mic.wav --ref " + dir / "ref.wav --out " + dir / "out.wav --metrics " + dir / "m.json"
                                     + " --taps 128 --backend cpu --suppression 0");
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    const double erle = steadyStateErleDb(slurp(dir / "m.json"));
    WARN("stereo far end with channels that cancel in their mean: ERLE " << erle << " dB");
    CHECK(erle > 25.0);
}

TEST_CASE("quell-render --batch renders a list, names what failed, resumes and shares it between shards", "[render][cli][batch]")
{
    TempDir dir;
    writePair(dir / "mic.wav", dir / "ref.wav", 16000, 16000, kWav16);
    {
        std::ofstream list(dir / "list.tsv");
        list << "# three files, one of them missing\n"
             << "mic.wav\tref.wav\tout/a.wav\n"
             << "mic.wav\tref.wav\tout/sub/b.flac\tout/sub/b.json\n"
             << "missing.wav\tref.wav\tout/c.wav\n";
    }
    const std::string list = dir / "list.tsv";
    Result r = render(dir, "--batch " + list + " --jobs 2 --taps 64 --backend cpu");
    INFO(r.out << r.err);
    CHECK(r.exitCode == 1);
    CHECK_THAT(r.out, Catch::Contains("batch: 2 done, 0 skipped (done earlier), 1 failed"));
    CHECK_THAT(r.out, Catch::Contains("failed: " + (dir / "out/c.wav") + " (line 4): exit 2, "));
    CHECK(fs::exists(dir / "out/a.wav"));
    CHECK(fs::exists(dir / "out/sub/b.flac"));   // folders made as the tree fills, the container from the name
    CHECK(fs::exists(dir / "out/sub/b.json"));
    CHECK(!fs::exists(dir / "out/c.wav"));
    CHECK(io::readAudio(dir / "out/sub/b.flac").frames() == 16000);

    // Again: what is done is skipped; the missing file is tried again.
    const auto before = fs::last_write_time(dir / "out/a.wav");
    r = render(dir, "--batch " + list + " --taps 64 --backend cpu");
    CHECK(r.exitCode == 1);
    CHECK_THAT(r.out, Catch::Contains("batch: 0 done, 2 skipped (done earlier), 1 failed"));
    CHECK(fs::last_write_time(dir / "out/a.wav") == before);

    // Shards: 0/2 takes lines 1 and 3 (a and c), 1/2 takes b; with the missing line gone, both succeed.
    {
        std::ofstream(dir / "list.tsv") << "mic.wav\tref.wav\tout/a.wav\nmic.wav\tref.wav\tout/b2.wav\nmic.wav\tref.wav\tout/c.wav\n";
    }
    r = render(dir, "--batch " + list + " --shard 0/2 --taps 64 --backend cpu");
    CHECK(r.exitCode == 0);
    CHECK_THAT(r.out, Catch::Contains("2 files, shard 0/2 of 3"));
    CHECK_THAT(r.out, Catch::Contains("batch: 1 done, 1 skipped (done earlier), 0 failed"));
    CHECK(fs::exists(dir / "out/c.wav"));
    CHECK(!fs::exists(dir / "out/b2.wav"));
    r = render(dir, "--batch " + list + " --shard 1/2 --taps 64 --backend cpu");
    CHECK(r.exitCode == 0);
    CHECK(fs::exists(dir / "out/b2.wav"));

    // Usage errors: exit 2, nothing done.
    CHECK(render(dir, "--batch " + list + " --mic mic.wav").exitCode == 2);
    CHECK(render(dir, "--batch " + list + " --shard 2/2").exitCode == 2);
    CHECK(render(dir, "--mic a --ref b --out c --jobs 2").exitCode == 2);
    CHECK(render(dir, "--batch " + (dir / "nothing.tsv")).exitCode == 2);
}

TEST_CASE("quell-render --batch --calls renders the files together, each as a lone render, and resumes", "[render][cli][batch]")
{
    // A 48 kHz stereo microphone (two calls) and two 16 kHz files through two streams: the second 16 kHz
    // file joins when the first leaves; a stereo far end without --mono-far-end and a 4 kHz file fail by
    // themselves.
    TempDir dir;
    writePair(dir / "mic48.wav", dir / "ref48.wav", 48000, 30000, kWav16, 2, 1);
    writePair(dir / "mic.wav", dir / "ref.wav", 16000, 16000, kWav16);
    writePair(dir / "micS.wav", dir / "refS.wav", 16000, 8000, kWav16, 1, 2);
    writePair(dir / "mic4k.wav", dir / "ref4k.wav", 4000, 4000, kWav16);
    {
        std::ofstream list(dir / "list.tsv");
        list << "mic48.wav\tref48.wav\tout/a.wav\tout/a.json\n"
             << "mic.wav\tref.wav\tout/b.wav\n"
             << "micS.wav\trefS.wav\tout/s.wav\n"
             << "mic4k.wav\tref4k.wav\tout/k.wav\n"
             << "mic.wav\tref.wav\tout/c.wav\n";
    }
    const std::string list = dir / "list.tsv";
    Result r = render(dir, "--batch " + list + " --calls 2 --taps 128 --backend cpu");
    INFO(r.out << r.err);
    CHECK(r.exitCode == 1);
    CHECK_THAT(r.out, Catch::Contains("calls: 2 streams of CPU"));
    CHECK_THAT(r.out, Catch::Contains("batch: 3 done, 0 skipped (done earlier), 2 failed"));
    CHECK_THAT(r.out, Catch::Contains("a stereo far end; --calls takes one far-end channel"));
    CHECK_THAT(r.out, Catch::Contains("out/k.wav (line 4): exit 2, a rate of 4000 Hz (the canceller takes 8000 to 192000)"));
    CHECK(fs::exists(dir / "out/a.json"));
    CHECK(!fs::exists(dir / "out/s.wav"));
    for (const auto& [mic, ref, out] : {std::tuple{"mic48.wav", "ref48.wav", "a.wav"}, std::tuple{"mic.wav", "ref.wav", "b.wav"}}) {
        const std::string lone = dir / (std::string("lone-") + out);
        REQUIRE(render(dir, "--mic " + (dir / mic) + " --ref " + (dir / ref) + " --out " + lone + " --taps 128 --backend cpu --quiet").exitCode == 0);
        const io::AudioData a = io::readAudio(lone), b = io::readAudio(dir / (std::string("out/") + out));
        INFO(out);
        CHECK(a.channels == b.channels);   // the same samples as a lone render
    }
    // The same file again, in a stream another file used before it: the same samples.
    CHECK(io::readAudio(dir / "out/c.wav").channels == io::readAudio(dir / "out/b.wav").channels);

    // Again with the stereo far end mixed: the rest is skipped.
    r = render(dir, "--batch " + list + " --calls 2 --taps 128 --backend cpu --mono-far-end");
    CHECK(r.exitCode == 1);
    CHECK_THAT(r.out, Catch::Contains("batch: 1 done, 3 skipped (done earlier), 1 failed"));
    CHECK(fs::exists(dir / "out/s.wav"));

    CHECK(render(dir, "--batch " + list + " --calls 2 --jobs 2").exitCode == 2);
    CHECK(render(dir, "--batch " + list + " --calls 2 --rate 48000").exitCode == 2);
    CHECK(render(dir, "--mic a --ref b --out c --calls 2").exitCode == 2);

    // Three files open per running file: S calls past what the process may open are refused by name.
    const std::string limited = "ulimit -n 100 && " + std::string(QUELL_RENDER_PATH) + " --batch " + list + " --calls 64 --backend cpu > "
                                + (dir / "limited.txt") + " 2>&1";
    const int status = std::system(("sh -c '" + limited + "'").c_str());
    INFO(slurp(dir / "limited.txt"));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK_THAT(slurp(dir / "limited.txt"), Catch::Contains("--calls 64 keeps up to 192 files open") && Catch::Contains("ulimit -n"));
}

namespace {

// quell-render run directly (no shell between), its output discarded: its exit code and peak resident
// memory in KiB.
std::pair<int, long> renderPeakKiB(const std::vector<std::string>& args)
{
    std::vector<char*> argv{const_cast<char*>(QUELL_RENDER_PATH)};
    for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
        ::execv(QUELL_RENDER_PATH, argv.data());
        ::_exit(127);
    }
    int status = 0;
    struct rusage usage {};
    ::wait4(pid, &status, 0, &usage);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

} // namespace

TEST_CASE("quell-render --batch --calls reads and writes as it goes: its memory does not grow with the files' length", "[render][cli][batch]")
{
    // 20 s and 300 s at 16 kHz: held whole, the longer would take about 75 MB more (16 bytes a sample).
    TempDir dir;
    writePair(dir / "mic20.wav", dir / "ref20.wav", 16000, 20 * 16000, kWav16);
    writePair(dir / "mic300.wav", dir / "ref300.wav", 16000, 300 * 16000, kWav16);
    std::ofstream(dir / "short.tsv") << "mic20.wav\tref20.wav\tout20.wav\n";
    std::ofstream(dir / "long.tsv") << "mic300.wav\tref300.wav\tout300.wav\tout300.json\n";
    std::ofstream(dir / "whole.tsv") << "mic300.wav\tref300.wav\twhole300.wav\n";
    const auto [shortCode, shortPeak] = renderPeakKiB({"--batch", dir / "short.tsv", "--calls", "1", "--taps", "64", "--backend", "cpu"});
    const auto [longCode, longPeak] = renderPeakKiB({"--batch", dir / "long.tsv", "--calls", "1", "--taps", "64", "--backend", "cpu"});
    // (A forked child's peak starts at the parent's size, this test's: the figures are at least that.)
    const auto [wholeCode, wholePeak] = renderPeakKiB({"--batch", dir / "whole.tsv", "--taps", "64", "--backend", "cpu"});
    INFO("peak resident memory: 20 s " << shortPeak << " KiB, 300 s " << longPeak << " KiB; 300 s by --jobs (held whole) " << wholePeak << " KiB");
    CHECK(wholePeak - shortPeak > 40 * 1024);   // what the measurement would show if --calls held the file
    REQUIRE(shortCode == 0);
    REQUIRE(longCode == 0);
    REQUIRE(wholeCode == 0);
    CHECK(longPeak - shortPeak < 16 * 1024);
    const io::AudioData out = io::readAudio(dir / "out300.wav");
    CHECK(out.frames() == 300u * 16000u);
    CHECK(fs::exists(dir / "out300.json"));
    // The echo is cancelled in the long file's last seconds as in the short file's.
    const io::AudioData mic = io::readAudio(dir / "mic300.wav");
    double m = 0.0, e = 0.0;
    for (std::size_t i = out.frames() - 5 * 16000; i < out.frames(); ++i) {
        m += double(mic.channels[0][i]) * mic.channels[0][i];
        e += double(out.channels[0][i]) * out.channels[0][i];
    }
    CHECK(10.0 * std::log10(m / e) > 20.0);
}
