// SPDX-License-Identifier: GPL-3.0-or-later
// quell-render --batch's list: parsing, errors with the line's number, shards and what counts as done.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "BatchList.h"
#include "io/CommandLine.h"
#include "io/WavFile.h"

namespace fs = std::filesystem;
using namespace quell::standalone;

namespace {

struct ListFolder {
    ListFolder()
    {
        std::string tmpl = (fs::temp_directory_path() / "quell-batch-test-XXXXXX").string();
        path = ::mkdtemp(tmpl.data());
    }
    ~ListFolder() { fs::remove_all(path); }
    fs::path write(const std::string& text) const
    {
        const fs::path list = path / "list.tsv";
        std::ofstream(list) << text;
        return list;
    }
    fs::path path;
};

} // namespace

TEST_CASE("Batch list: jobs from tab-separated lines, paths from the list's folder", "[render][batch]")
{
    ListFolder dir;
    const auto list = dir.write("# mic\tref\tout\n\nm1.wav\tr1.wav\tout/o1.wav\n/abs/m2.wav\tr2.wav\to2.flac\to2.json\r\n");
    const auto jobs = readBatchList(list);
    REQUIRE(jobs.size() == 2);
    CHECK(jobs[0].number == 0);
    CHECK(jobs[0].line == 3);
    CHECK(jobs[0].mic == (dir.path / "m1.wav").string());
    CHECK(jobs[0].out == (dir.path / "out/o1.wav").string());
    CHECK(jobs[0].metrics.empty());
    CHECK(jobs[1].number == 1);
    CHECK(jobs[1].line == 4);
    CHECK(jobs[1].mic == "/abs/m2.wav");
    CHECK(jobs[1].metrics == (dir.path / "o2.json").string());   // the Windows line end is not part of it
}

TEST_CASE("Batch list: a bad line is named with its number", "[render][batch]")
{
    ListFolder dir;
    const auto fails = [&](const std::string& text, const std::string& message) {
        INFO(text);
        try {
            readBatchList(dir.write(text));
            FAIL("no error");
        } catch (const quell::io::FileError& e) {
            CHECK_THAT(e.what(), Catch::Contains(message));
        }
    };
    fails("a.wav\tb.wav\n", "list.tsv:1: expected MIC, REF, OUT and an optional METRICS separated by tabs, found 2 fields");
    fails("a.wav b.wav c.wav\n", "found 1 field");
    fails("a\tb\tc\td\te\n", "found 5 fields");
    fails("a\t\tc\n", "list.tsv:1: an empty field");
    fails("a\tb\tc\t\n", "an empty field");
    fails("# x\na\tb\tc\nd\te\tc\n", "list.tsv:3: ");
    CHECK_THROWS_AS(readBatchList(dir.path / "none.tsv"), quell::io::FileError);
}

TEST_CASE("Batch list: N shards take every job exactly once", "[render][batch]")
{
    std::vector<BatchJob> jobs(11);
    for (std::size_t i = 0; i < jobs.size(); ++i)
        jobs[i].number = i;
    for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{11}, std::size_t{20}}) {
        std::multiset<std::size_t> seen;
        for (std::size_t k = 0; k < n; ++k)
            for (const BatchJob& j : jobsOfShard(jobs, {k, n}))
                seen.insert(j.number);
        INFO(n << " shards");
        CHECK(seen.size() == jobs.size());
        for (std::size_t i = 0; i < jobs.size(); ++i)
            CHECK(seen.count(i) == 1);
    }
    CHECK(parseShard("3/8").index == 3);
    CHECK(parseShard("3/8").count == 8);
    CHECK_THROWS_AS(parseShard("8/8"), quell::io::UsageError);
    CHECK_THROWS_AS(parseShard("3"), quell::io::UsageError);
    CHECK_THROWS_AS(parseShard("-1/4"), quell::io::UsageError);
    CHECK_THROWS_AS(parseShard("a/4"), quell::io::UsageError);
}

TEST_CASE("Batch list: a job is done when its output and its metrics exist", "[render][batch]")
{
    ListFolder dir;
    BatchJob job;
    job.out = (dir.path / "o.wav").string();
    job.metrics = (dir.path / "o.json").string();
    CHECK(!alreadyDone(job));
    std::ofstream(job.out) << "x";
    CHECK(!alreadyDone(job));   // a run that stopped between the two is done again
    std::ofstream(job.metrics) << "{}";
    CHECK(alreadyDone(job));
    job.metrics.clear();
    CHECK(alreadyDone(job));
}
