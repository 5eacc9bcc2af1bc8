// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench: runs one benchmark family on the GPU with its peers and physical limits in the same run.
//   quell-bench rls|iir|fir|engine|blockrls|blockrls_cublas|kalman|streams [--json PATH] [--quick]   (--json=PATH too; an unknown option is an error)
//   quell-bench engine [--seconds S] [--blocks 64,128,256] [--safety-blocks N|auto] [--only blocks,wait,stages,stress]
//   quell-bench blockrls [--taps 1024,4096] [--k 32,64] [--streams 16,64]
//   quell-bench multistream [--taps 512,1024] [--streams 16,64] [--filter rls,kalman] [--only gpu|cpu] [--seconds S]
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include "BenchRegistry.h"
#include "engine/RealtimeEngine.h"
#include "io/CommandLine.h"
#include "ProgramOptions.h"

namespace quell::bench {
std::map<std::string, BenchCommand>& registry()
{
    static std::map<std::string, BenchCommand> commands;
    return commands;
}
} // namespace quell::bench

static void usage()
{
    std::fprintf(stderr, "usage: quell-bench <command> [--json PATH] [--quick]\n"
                         "       quell-bench engine [--seconds S] [--blocks 64,128,256] [--safety-blocks N|auto]\n"
                         "                          [--only blocks,wait,stages,stress]\n"
                         "  --seconds: each block-size row's length (default 60, 5 with --quick); --blocks: those rows'\n"
                         "  sizes at 48 kHz (default 128,256); --safety-blocks: theirs (default auto); --only: sections\n"
                         "commands:\n");
    for (const auto& [name, cmd] : quell::bench::registry())
        std::fprintf(stderr, "  %-6s %s\n", name.c_str(), cmd.help.c_str());
}

int main(int argc, char* argv[])
{
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    const auto it = quell::bench::registry().find(argv[1]);
    if (it == quell::bench::registry().end()) {
        std::fprintf(stderr, "quell-bench: unknown command '%s'\n", argv[1]);
        usage();
        return 2;
    }
    quell::bench::BenchArgs args;
    args.jsonPath = std::string("bench-") + argv[1] + ".json";
    // The command's options, on the command line layer every Quell program uses.
    quell::standalone::ProgramOptions cli(std::string("quell-bench ") + argv[1],
                                          std::string("usage: quell-bench ") + argv[1] + " [options]",
                                          quell::standalone::ProgramOptions::versionLine("quell-bench"));
    cli.text("--json", "PATH", args.jsonPath, "where the JSON goes (default bench-<command>.json)");
    cli.flag("--quick", args.quick, "short rows (a smoke test, not a measurement)");
    cli.number("--seconds", "S", args.seconds, 0.5, 86400.0, "engine: each block-size row's length (default 60, 5 with --quick)");
    const auto intList = [](const char* option, std::vector<int>& to, int lo, int hi) {
        return [option, &to, lo, hi](const std::string& v) {
            std::stringstream list(v);
            for (std::string item; std::getline(list, item, ',');)
                to.push_back(quell::io::parseInt(option, item, lo, hi));
        };
    };
    cli.option("--blocks", "N[,N...]", "engine: the rows' block sizes at 48 kHz (default 128,256)", intList("--blocks", args.blocks, 16, 8192));
    cli.option("--taps", "N[,N...]", "blockrls: the rows' filter lengths (default 256 to 8192)", intList("--taps", args.taps, 8, 8192));
    cli.option("--k", "K[,K...]", "blockrls: the rows' samples per block (default 16 to 256)", intList("--k", args.steps, 1, 256));
    cli.option("--streams", "S[,S...]", "blockrls: the batched rows' streams (default 16,64,256; 0 = no batched rows)",
               intList("--streams", args.streams, 0, 65535));
    cli.option("--safety-blocks", "N|auto", "engine: the rows' safety blocks (default auto)", [&args](const std::string& v) {
        args.safetyBlocks = v == "auto" ? -1 : quell::io::parseInt("--safety-blocks", v, 0, quell::engine::RealtimeEngine::kMaxSafetyBlocks);
    });
    cli.text("--only", "SECTIONS", args.only, "engine: blocks,wait,stages,stress (default all); multistream: gpu or cpu (default both)");
    cli.option("--filter", "F[,F...]", "multistream: the rows' filters, rls and kalman (default both)", [&args](const std::string& v) {
        std::stringstream list(v);
        for (std::string item; std::getline(list, item, ',');) {
            if (item != "rls" && item != "kalman")
                throw quell::io::UsageError("--filter takes rls and kalman (got '" + item + "')");
            args.filters.push_back(item);
        }
    });
    try {
        if (!cli.parse(argc - 1, argv + 1))
            return 0;
    } catch (...) {
        return quell::io::reportCurrentException((std::string("quell-bench ") + argv[1]).c_str());
    }
    try {
        return it->second.run(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "quell-bench %s: %s\n", argv[1], e.what());
        return 1;
    }
}
