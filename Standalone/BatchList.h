// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// quell-render --batch: the list of files to render, one job per line, and which of them this run does.
//
// The list is tab-separated text: MIC <tab> REF <tab> OUT [<tab> METRICS]. Blank lines and lines that
// start with '#' are skipped. Relative paths are taken from the list's folder, so a list and its audio
// move together (to another machine, into a job array's working directory). A shard K/N takes the jobs
// whose number (from 0, in the list's order) modulo N is K: N machines or array tasks
// running the same command with K = 0 .. N-1 share the list between them, each job exactly once. A job
// whose OUT (and METRICS, when the line names one) exists is done: quell-render writes both atomically
// and removes both on a failure, so an existing OUT is never half a file, and a run that stopped part of
// the way is resumed by running the same command again.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace quell::standalone {

struct BatchJob {
    std::size_t number = 0;   // from 0, in the list's order
    std::size_t line = 0;     // in the list file, from 1 (for messages)
    std::string mic, ref, out, metrics;
};

struct Shard {
    std::size_t index = 0, count = 1;
};

// "K/N" with 0 <= K < N; throws io::UsageError naming --shard otherwise.
Shard parseShard(const std::string& text);

// Throws io::FileError with the list's name and the line's number on an unreadable list, a line that
// does not have 3 or 4 fields, an empty field, or an OUT named twice.
std::vector<BatchJob> readBatchList(const std::filesystem::path& list);

// The jobs of `shard`, in order.
std::vector<BatchJob> jobsOfShard(const std::vector<BatchJob>& jobs, const Shard& shard);

// Its OUT exists, and its METRICS when it has one.
bool alreadyDone(const BatchJob& job);

} // namespace quell::standalone
