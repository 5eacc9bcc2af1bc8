// SPDX-License-Identifier: GPL-3.0-or-later
#include "eval/CorpusScenario.h"

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <sndfile.h>

namespace quell::eval {
namespace {

std::vector<std::vector<float>> readWav(const std::filesystem::path& path, int& rate)
{
    SF_INFO info{};
    SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
    if (!f)
        throw std::runtime_error("cannot read " + path.string() + ": " + sf_strerror(nullptr));
    std::vector<float> interleaved(static_cast<std::size_t>(info.frames) * info.channels);
    const sf_count_t got = sf_readf_float(f, interleaved.data(), info.frames);
    sf_close(f);
    if (got != info.frames)
        throw std::runtime_error("short read from " + path.string());
    rate = info.samplerate;
    std::vector<std::vector<float>> channels(info.channels, std::vector<float>(info.frames));
    for (sf_count_t n = 0; n < info.frames; ++n)
        for (int c = 0; c < info.channels; ++c)
            channels[c][n] = interleaved[n * info.channels + c];
    return channels;
}

// scenario.json is written by Tests/corpus with one "key": value per line; these two readers rely on that.
std::optional<double> number(const std::string& json, const std::string& key)
{
    const std::regex re("\"" + key + "\":\\s*(-?[0-9.eE+-]+|null)");
    std::smatch m;
    if (!std::regex_search(json, m, re))
        throw std::runtime_error("scenario.json: no \"" + key + "\"");
    if (m[1] == "null")
        return std::nullopt;
    return std::stod(m[1]);
}

Intervals intervals(const std::string& json, const std::string& key)
{
    const std::regex re("\"" + key + "\":\\s*\\[(.*)\\]");
    std::smatch m;
    if (!std::regex_search(json, m, re))
        throw std::runtime_error("scenario.json: no \"" + key + "\"");
    Intervals out;
    const std::string body = m[1];
    const std::regex pair("\\[\\s*(-?[0-9.eE+-]+)\\s*,\\s*(-?[0-9.eE+-]+)\\s*\\]");
    for (auto it = std::sregex_iterator(body.begin(), body.end(), pair); it != std::sregex_iterator(); ++it)
        out.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
    return out;
}

} // namespace

std::vector<std::filesystem::path> listScenarios(const std::filesystem::path& corpusDir)
{
    std::ifstream in(corpusDir / "manifest.tsv");
    if (!in)
        throw std::runtime_error("no manifest.tsv in " + corpusDir.string() + " (make one with quell-corpus)");
    std::vector<std::filesystem::path> dirs;
    std::string line;
    std::getline(in, line);   // header
    while (std::getline(in, line)) {
        const std::string name = line.substr(0, line.find('\t'));
        if (!name.empty())
            dirs.push_back(corpusDir / name);
    }
    return dirs;
}

CorpusScenario loadScenario(const std::filesystem::path& dir)
{
    std::ifstream in(dir / "scenario.json");
    if (!in)
        throw std::runtime_error("no scenario.json in " + dir.string());
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string json = ss.str();

    CorpusScenario s;
    s.name = dir.filename().string();
    int rate = 0;
    s.ref = readWav(dir / "ref.wav", rate);
    s.sampleRate = rate;
    auto mono = [&](const char* file) {
        int r = 0;
        auto ch = readWav(dir / file, r);
        if (r != rate || ch.empty() || ch[0].size() != s.ref[0].size())
            throw std::runtime_error(std::string(file) + " does not match ref.wav in " + dir.string());
        return std::move(ch[0]);
    };
    s.mic = mono("mic.wav");
    s.near = mono("near.wav");
    s.echo = mono("echo.wav");
    s.noise = mono("noise.wav");
    s.pathChangeSeconds = number(json, "pathChangeSeconds");
    s.bulkDelayMs = number(json, "bulkDelayMs").value_or(0.0);
    s.farActive = intervals(json, "farActive");
    s.echoActive = intervals(json, "echoActive");
    s.nearActive = intervals(json, "nearActive");
    s.doubleTalk = intervals(json, "doubleTalkIntervals");
    return s;
}

} // namespace quell::eval
