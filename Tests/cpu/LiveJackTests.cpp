// SPDX-License-Identifier: GPL-3.0-or-later
// quell-live against a real audio server with no hardware: JACK's dummy driver, reached through
// PortAudio's JACK host API, exactly as on a machine with a sound card.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "io/WavFile.h"

extern char** environ;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

pid_t spawn(const std::vector<std::string>& args, const std::string& logPath)
{
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

int waitExit(pid_t pid)
{
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const std::string& path)
{
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// A JACK server with the dummy driver (no sound card), private to this test, stopped on scope exit.
// Real-time scheduling (-R) where allowed, as a JACK server normally runs: a time-shared server thread
// on a busy virtual machine can fire two cycles back to back, which is not the engine's doing.
class DummyJackServer {
public:
    DummyJackServer(const std::string& dir, int rate, int period)
        : name_("quell-test-" + std::to_string(::getpid()))
    {
        ::setenv("JACK_NO_AUDIO_RESERVATION", "1", 1);
        ::setenv("JACK_DEFAULT_SERVER", name_.c_str(), 1);
        pid_ = spawn({"jackd", "-R", "-n", name_, "-d", "dummy", "-r", std::to_string(rate), "-p", std::to_string(period)},
                     dir + "/jackd.log");
        if (pid_ > 0)
            ready_ = std::system(("jack_wait -s " + name_ + " -w -t 10 >/dev/null 2>&1").c_str()) == 0;
    }
    ~DummyJackServer()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            waitExit(pid_);
        }
    }
    bool ready() const { return ready_; }

private:
    std::string name_;
    pid_t pid_ = -1;
    bool ready_ = false;
};

struct Dir {
    std::string path;
    Dir()
    {
        std::string t = (fs::temp_directory_path() / "quell-live-test-XXXXXX").string();
        path = ::mkdtemp(t.data());
    }
    ~Dir() { fs::remove_all(path); }
};

} // namespace

TEST_CASE("quell-live runs 10 s on JACK's dummy driver, its blocks processed in a fraction of the period, and records completely", "[live][jack]")
{
    // 1024-sample periods (21 ms): the test machines are small virtual machines whose scheduling
    // stalls reach several milliseconds, which a 5 ms period cannot absorb; the engine's own timing at
    // 128 and 256 samples is measured on real hardware by quell-bench engine. Even at 21 ms such a
    // machine now and then seems to stall a whole period (CI on a clean clone of 63b7800 saw 2 late
    // blocks of 469 with processing at 2-3 ms a block; 5 runs here had none): what the engine answers for is its processing time,
    // asserted at the 99th percentile, and late blocks that stay rare (at most 1%). The bound is the CPU
    // filter choice's own: a filter is taken where it fits half a core less 20 % headroom
    // (chooseRealtimeCpuFilter), so the block's processing, the other stages included, must stay under half
    // the period. (A quarter, asserted before, was stricter than that choice: CI on a slower machine
    // failed it at 5.9 ms while the filter used 0.16 of a core.)
    Dir dir;
    DummyJackServer jack(dir.path, 48000, 1024);
    REQUIRE(jack.ready()); // jackd2 is installed by .ci/setup
    const std::string rec = dir.path + "/live.wav", log = dir.path + "/live.log";
    const pid_t pid = spawn({QUELL_LIVE_PATH, "--host-api", "jack", "--block", "1024", "--far-end",
                             std::string(QUELL_DEMO_DIR) + "/ref.wav", "--record", rec, "--seconds", "10"}, log);
    REQUIRE(pid > 0);
    const int code = waitExit(pid);
    const std::string out = slurp(log);
    INFO(out);
    REQUIRE(code == 0);
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex("late blocks ([0-9]+) of ([0-9]+)")));
    const long late = std::stol(m[1].str()), blocks = std::stol(m[2].str());
    // quell-live's summary and its timing line, printed whether the case passes or not, so that a run of
    // the suite (ctest -V) shows what the engine saw beside the other tests.
    for (const char* pattern : {"[^\n]*late blocks [0-9]+ of [0-9]+[^\n]*", "[^\n]*p99 [0-9]+ us[^\n]*"}) {
        std::smatch line;
        if (std::regex_search(out, line, std::regex(pattern)))
            std::printf("quell-live on JACK's dummy driver: %s\n", line[0].str().c_str());
    }
    CHECK(blocks >= 460); // 10 s of 1024-sample callbacks at 48 kHz: 468.75
    CHECK(late * 100 <= blocks);
    REQUIRE(std::regex_search(out, m, std::regex("p99 ([0-9]+) us")));
    CHECK(std::stol(m[1].str()) < 1024 * 1000000L / 48000 / 2); // half the 21.3 ms period
    CHECK_THAT(out, !Catch::Contains("ALSA lib"));   // the device scan's noise stays out of the user's way
    const quell::io::AudioData a = quell::io::readAudio(rec);
    CHECK(a.format.sampleRate == 48000);
    CHECK(a.frames() == 480000);
    CHECK(fs::directory_iterator(dir.path) != fs::directory_iterator()); // (the recording is the only WAV)
    for (const auto& e : fs::directory_iterator(dir.path))
        CHECK(e.path().string().find(".part") == std::string::npos);
}

TEST_CASE("quell-live ends cleanly on SIGTERM with a valid WAV of what it heard", "[live][jack]")
{
    Dir dir;
    DummyJackServer jack(dir.path, 48000, 256);
    REQUIRE(jack.ready());
    const std::string rec = dir.path + "/live.wav", log = dir.path + "/live.log";
    const pid_t pid = spawn({QUELL_LIVE_PATH, "--host-api", "jack", "--far-end", std::string(QUELL_DEMO_DIR) + "/ref.wav",
                             "--record", rec, "--seconds", "60"}, log);
    REQUIRE(pid > 0);
    std::this_thread::sleep_for(3s);
    ::kill(pid, SIGTERM);
    const int code = waitExit(pid);
    INFO(slurp(log));
    CHECK(code == 128 + SIGTERM);   // as a shell reports a program a signal stopped
    CHECK_THAT(slurp(log), Catch::Contains("stopped after"));
    const quell::io::AudioData a = quell::io::readAudio(rec);
    CHECK(a.frames() > 48000);       // more than a second was recorded...
    CHECK(a.frames() < 48000 * 10);  // ...and it stopped when told
}

TEST_CASE("quell-live without an audio server or with a bad far end fails clearly", "[live]")
{
    Dir dir;
    const std::string log = dir.path + "/live.log";
    ::setenv("JACK_DEFAULT_SERVER", "quell-no-such-server", 1);
    ::setenv("JACK_NO_START_SERVER", "1", 1);
    pid_t pid = spawn({QUELL_LIVE_PATH, "--host-api", "jack", "--far-end", std::string(QUELL_DEMO_DIR) + "/ref.wav"}, log);
    CHECK(waitExit(pid) == 3);
    CHECK_THAT(slurp(log), Catch::Contains("quell-live: no input device on host API 'jack'"));

    pid = spawn({QUELL_LIVE_PATH, "--far-end", dir.path + "/missing.wav"}, log);
    CHECK(waitExit(pid) == 2);
    CHECK_THAT(slurp(log), Catch::Contains("missing.wav: cannot open"));

    pid = spawn({QUELL_LIVE_PATH, "--record", dir.path + "/x.wav"}, log);
    CHECK(waitExit(pid) == 2);
    CHECK_THAT(slurp(log), Catch::Contains("exactly one far end"));

    pid = spawn({QUELL_LIVE_PATH, "--far-end", std::string(QUELL_DEMO_DIR) + "/ref.wav", "--safety-blocks", "5"}, log);
    CHECK(waitExit(pid) == 2);
    CHECK_THAT(slurp(log), Catch::Contains("--safety-blocks"));
    ::unsetenv("JACK_NO_START_SERVER");
}

TEST_CASE("quell-live --verbose keeps the audio back-end's device-scan messages; by default they are dropped", "[live]")
{
    Dir dir;
    const std::string quiet = dir.path + "/quiet.log", verbose = dir.path + "/verbose.log";
    const pid_t a = spawn({QUELL_LIVE_PATH, "--list-devices"}, quiet);
    REQUIRE(a > 0);
    REQUIRE(waitExit(a) == 0);
    const pid_t b = spawn({QUELL_LIVE_PATH, "--list-devices", "--verbose"}, verbose);
    REQUIRE(b > 0);
    REQUIRE(waitExit(b) == 0);
    const std::string q = slurp(quiet), v = slurp(verbose);
    INFO(v);
    CHECK_THAT(q, !Catch::Contains("ALSA lib"));
    // This machine's ALSA (no sound card) always complains during the scan; --verbose lets it through.
    CHECK(v.size() > q.size());
}
