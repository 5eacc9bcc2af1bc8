// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A benchmark's results: printed as an aligned table on stdout and written as JSON, the same figures.
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace quell::bench {

class BenchReport {
public:
    using Value = std::variant<std::string, double, long long>;
    struct Row {
        std::string table;
        std::vector<std::pair<std::string, Value>> fields;
    };

    explicit BenchReport(std::string name) : name_(std::move(name)) {}

    void setInfo(const std::string& key, Value v) { info_.emplace_back(key, std::move(v)); }
    void add(const std::string& table, std::vector<std::pair<std::string, Value>> fields)
    {
        rows_.push_back({table, std::move(fields)});
    }

    void print(std::FILE* out = stdout) const;
    // Writes to path.tmp and renames, so a crash never leaves half a JSON file.
    bool writeJson(const std::string& path) const;

private:
    std::string name_;
    std::vector<std::pair<std::string, Value>> info_;
    std::vector<Row> rows_;
};

} // namespace quell::bench
