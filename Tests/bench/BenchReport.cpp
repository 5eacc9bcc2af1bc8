// SPDX-License-Identifier: GPL-3.0-or-later
#include "BenchReport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

namespace quell::bench {
namespace {

std::string text(const BenchReport::Value& v)
{
    char buf[64];
    if (const auto* s = std::get_if<std::string>(&v))
        return *s;
    if (const auto* i = std::get_if<long long>(&v)) {
        std::snprintf(buf, sizeof buf, "%lld", *i);
        return buf;
    }
    const double d = std::get<double>(v);
    const double a = std::fabs(d);
    if (a != 0.0 && (a >= 1e7 || a < 1e-3))
        std::snprintf(buf, sizeof buf, "%.3e", d);
    else
        std::snprintf(buf, sizeof buf, "%.4g", d);
    return buf;
}

nlohmann::ordered_json json(const BenchReport::Value& v)
{
    if (const auto* s = std::get_if<std::string>(&v))
        return *s;
    if (const auto* i = std::get_if<long long>(&v))
        return *i;
    return std::get<double>(v);   // written as null when not finite
}

} // namespace

void BenchReport::print(std::FILE* out) const
{
    std::fprintf(out, "== quell-bench %s ==\n", name_.c_str());
    for (const auto& [k, v] : info_)
        std::fprintf(out, "%s: %s\n", k.c_str(), text(v).c_str());
    std::vector<std::string> tables;
    for (const Row& r : rows_)
        if (std::find(tables.begin(), tables.end(), r.table) == tables.end())
            tables.push_back(r.table);
    for (const std::string& t : tables) {
        std::vector<const Row*> rows;
        for (const Row& r : rows_)
            if (r.table == t) rows.push_back(&r);
        std::vector<std::string> cols;
        for (const Row* r : rows)
            for (const auto& f : r->fields)
                if (std::find(cols.begin(), cols.end(), f.first) == cols.end())
                    cols.push_back(f.first);
        std::vector<std::size_t> width(cols.size());
        for (std::size_t c = 0; c < cols.size(); ++c) {
            width[c] = cols[c].size();
            for (const Row* r : rows)
                for (const auto& f : r->fields)
                    if (f.first == cols[c]) width[c] = std::max(width[c], text(f.second).size());
        }
        std::fprintf(out, "\n-- %s --\n", t.c_str());
        for (std::size_t c = 0; c < cols.size(); ++c)
            std::fprintf(out, "%*s  ", static_cast<int>(width[c]), cols[c].c_str());
        std::fprintf(out, "\n");
        for (const Row* r : rows) {
            for (std::size_t c = 0; c < cols.size(); ++c) {
                std::string cell;
                for (const auto& f : r->fields)
                    if (f.first == cols[c]) cell = text(f.second);
                std::fprintf(out, "%*s  ", static_cast<int>(width[c]), cell.c_str());
            }
            std::fprintf(out, "\n");
        }
    }
    std::fflush(out);
}

bool BenchReport::writeJson(const std::string& path) const
{
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp);
        if (!f)
            return false;
        nlohmann::ordered_json report = {{"benchmark", name_}, {"info", nlohmann::ordered_json::object()},
                                         {"rows", nlohmann::ordered_json::array()}};
        for (const auto& [k, v] : info_)
            report["info"][k] = json(v);
        for (const Row& row : rows_) {
            nlohmann::ordered_json r = {{"table", row.table}};
            for (const auto& [k, v] : row.fields)
                r[k] = json(v);
            report["rows"].push_back(std::move(r));
        }
        f << report.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        if (!f)
            return false;
    }
    return std::rename(tmp.c_str(), path.c_str()) == 0;
}

} // namespace quell::bench
