// SPDX-License-Identifier: GPL-3.0-or-later
#include "corpus/SpeechSynthesis.h"

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "dsp/PolyphaseResampler.h"
#include "io/WavFile.h"

namespace quell::corpus {
namespace {

// Arguments are quoted for /bin/sh; only the voice is user-visible text on the command line (the
// sentence goes through a file), and it is checked to hold no quote anyway.
std::string shellQuote(const std::string& s)
{
    if (s.find('\'') != std::string::npos)
        throw std::invalid_argument("espeak-ng argument contains a quote: " + s);
    return "'" + s + "'";
}

// A temporary folder that removes itself.
class ScratchDir {
public:
    ScratchDir()
    {
        std::string pattern = (std::filesystem::temp_directory_path() / "quell-speech-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            throw std::runtime_error("cannot create a temporary folder for espeak-ng output");
        path_ = pattern;
    }
    ~ScratchDir()
    {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

} // namespace

void requireEspeak()
{
    const int status = std::system("command -v espeak-ng >/dev/null 2>&1");
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("espeak-ng is not installed or not on PATH: the speech scenarios need it "
                                 "(Debian: apt-get install espeak-ng), or pass --no-speech");
}

std::vector<double> synthesize(const Utterance& u, int sampleRate)
{
    ScratchDir scratch;
    const auto textPath = scratch.path() / "text.txt";
    const auto wavPath = scratch.path() / "speech.wav";
    {
        std::ofstream text(textPath);
        text << u.text << '\n';
        if (!text)
            throw std::runtime_error("cannot write " + textPath.string());
    }
    const std::string command = "espeak-ng -v " + shellQuote(u.voice) + " -s " + std::to_string(u.wordsPerMinute)
                                + " -p " + std::to_string(u.pitch) + " -w " + shellQuote(wavPath.string()) + " -f "
                                + shellQuote(textPath.string()) + " 2>&1";
    const int status = std::system(command.c_str());
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("espeak-ng failed (voice " + u.voice + "): " + command);

    const io::AudioData spoken = io::readAudio(wavPath.string());
    std::vector<double> in(spoken.channels[0].begin(), spoken.channels[0].end());

    // The last syllable comes out (the resampler is flushed) and the group delay is dropped.
    const std::vector<double> out = dsp::resampleWhole<double>(in, spoken.format.sampleRate, sampleRate);
    // espeak-ng pads with silence; the corpus places its own pauses.
    const double floor = 1e-4;
    std::size_t first = 0, last = out.size();
    while (first < last && std::abs(out[first]) < floor)
        ++first;
    while (last > first && std::abs(out[last - 1]) < floor)
        --last;
    if (first == last)
        throw std::runtime_error("espeak-ng produced silence (voice " + u.voice + ")");
    return std::vector<double>(out.begin() + static_cast<std::ptrdiff_t>(first),
                               out.begin() + static_cast<std::ptrdiff_t>(last));
}

} // namespace quell::corpus
