// SPDX-License-Identifier: GPL-3.0-or-later
#include "eval/CorpusScenario.h"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>
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

// A number or null under `key` of scenario.json.
std::optional<double> number(const nlohmann::json& json, const char* key)
{
    const auto it = json.find(key);
    if (it == json.end())
        throw std::runtime_error(std::string("scenario.json: no \"") + key + "\"");
    if (it->is_null())
        return std::nullopt;
    if (!it->is_number())
        throw std::runtime_error(std::string("scenario.json: \"") + key + "\" is not a number");
    return it->get<double>();
}

// A list of [start, end] pairs in seconds under `key`.
Intervals intervals(const nlohmann::json& json, const char* key)
{
    const auto it = json.find(key);
    if (it == json.end() || !it->is_array())
        throw std::runtime_error(std::string("scenario.json: no list \"") + key + "\"");
    Intervals out;
    for (const auto& pair : *it) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number())
            throw std::runtime_error(std::string("scenario.json: \"") + key + "\" holds something other than [start, end]");
        out.emplace_back(pair[0].get<double>(), pair[1].get<double>());
    }
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
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error((dir / "scenario.json").string() + ": " + e.what());
    }

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
