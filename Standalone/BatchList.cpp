// SPDX-License-Identifier: GPL-3.0-or-later
#include "BatchList.h"

#include <fstream>
#include <set>
#include <sstream>

#include "io/CommandLine.h"
#include "io/WavFile.h"

namespace quell::standalone {

Shard parseShard(const std::string& text)
{
    const auto slash = text.find('/');
    if (slash == std::string::npos)
        throw io::UsageError("--shard: expected K/N (this run's share K of N, from 0), got '" + text + "'");
    Shard s;
    s.count = static_cast<std::size_t>(io::parseInt("--shard", text.substr(slash + 1), 1, 1000000));
    s.index = static_cast<std::size_t>(io::parseInt("--shard", text.substr(0, slash), 0, 999999));
    if (s.index >= s.count)
        throw io::UsageError("--shard: K must be below N (K from 0 to N - 1), got '" + text + "'");
    return s;
}

std::vector<BatchJob> readBatchList(const std::filesystem::path& list)
{
    std::ifstream in(list);
    if (!in)
        throw io::FileError(list.string() + ": cannot be read");
    const std::filesystem::path folder = list.parent_path();
    const auto resolve = [&](const std::string& field) {
        const std::filesystem::path p(field);
        return (p.is_absolute() ? p : folder / p).lexically_normal().string();
    };
    std::vector<BatchJob> jobs;
    std::set<std::string> outs;
    std::string text;
    for (std::size_t line = 1; std::getline(in, text); ++line) {
        if (!text.empty() && text.back() == '\r')
            text.pop_back();
        if (text.empty() || text.front() == '#')
            continue;
        std::vector<std::string> fields;
        std::stringstream split(text);
        for (std::string field; std::getline(split, field, '\t');)
            fields.push_back(field);
        if (!text.empty() && text.back() == '\t')
            fields.emplace_back();
        const auto where = list.string() + ":" + std::to_string(line) + ": ";
        if (fields.size() < 3 || fields.size() > 4)
            throw io::FileError(where + "expected MIC, REF, OUT and an optional METRICS separated by tabs, found "
                                + std::to_string(fields.size()) + " field" + (fields.size() == 1 ? "" : "s"));
        for (const auto& f : fields)
            if (f.empty())
                throw io::FileError(where + "an empty field");
        BatchJob job;
        job.number = jobs.size();
        job.line = line;
        job.mic = resolve(fields[0]);
        job.ref = resolve(fields[1]);
        job.out = resolve(fields[2]);
        if (fields.size() == 4)
            job.metrics = resolve(fields[3]);
        if (!outs.insert(job.out).second)
            throw io::FileError(where + job.out + " is the output of an earlier line too");
        jobs.push_back(std::move(job));
    }
    if (in.bad())
        throw io::FileError(list.string() + ": read error");
    return jobs;
}

std::vector<BatchJob> jobsOfShard(const std::vector<BatchJob>& jobs, const Shard& shard)
{
    std::vector<BatchJob> mine;
    for (const BatchJob& job : jobs)
        if (job.number % shard.count == shard.index)
            mine.push_back(job);
    return mine;
}

bool alreadyDone(const BatchJob& job)
{
    std::error_code ec;
    return std::filesystem::is_regular_file(job.out, ec) && (job.metrics.empty() || std::filesystem::is_regular_file(job.metrics, ec));
}

} // namespace quell::standalone
