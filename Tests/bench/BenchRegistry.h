// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Sub-commands of quell-bench register themselves here: QUELL_BENCH_COMMAND(rls, "...") { ... }.
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace quell::bench {

struct BenchArgs {
    std::string jsonPath;            // --json PATH (default: bench-<name>.json)
    bool quick = false;              // --quick: fewer sizes and repetitions (smoke runs)
    // engine (and gpuload's --seconds):
    double seconds = 0.0;            // --seconds S: length of each block-size row (0: the command's default)
    std::vector<int> blocks;         // --blocks 64,128,256: the block-size rows (empty: 128 and 256)
    int safetyBlocks = -1;           // --safety-blocks N|auto: for the block-size rows (-1: automatic)
    std::string only;                // --only SECTION[,SECTION]: blocks, wait, stages, stress (empty: all)
    // blockrls:
    std::vector<int> taps;           // --taps N[,N...]: the rows' filter lengths (empty: the command's list)
    std::vector<int> steps;          // --k K[,K...]: the rows' samples per block (empty: the command's list)
    std::vector<int> streams;        // --streams S[,S...]: batched rows' stream counts (empty: the command's list)
    // multistream:
    std::vector<std::string> filters;   // --filter rls,kalman: the rows' filters (empty: both)
};

using BenchFn = std::function<int(const BenchArgs&)>;

struct BenchCommand {
    std::string help;
    BenchFn run;
};

std::map<std::string, BenchCommand>& registry();

struct Registrar {
    Registrar(const char* name, const char* help, BenchFn fn) { registry()[name] = {help, std::move(fn)}; }
};

} // namespace quell::bench

#define QUELL_BENCH_COMMAND(name, help)                                                      \
    static int bench_##name(const ::quell::bench::BenchArgs&);                               \
    static ::quell::bench::Registrar registrar_##name(#name, help, &bench_##name);            \
    static int bench_##name(const ::quell::bench::BenchArgs& args)
