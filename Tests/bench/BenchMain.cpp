// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench: runs one benchmark family on the GPU with its peers and physical limits in the same run.
//   quell-bench rls|iir|fir|engine [--json PATH] [--quick]   (--json=PATH too; an unknown option is an error)
//   quell-bench engine [--seconds S] [--blocks 64,128,256] [--safety-blocks N|auto] [--only blocks,wait,stages,stress]
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include "BenchRegistry.h"
#include "engine/RealtimeEngine.h"
#include "io/CommandLine.h"

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
    try {
        // The command's options, walked as every Quell program walks its own (--opt value, --opt=value, --).
        quell::io::Arguments walker(argc - 1, argv + 1);
        while (walker.next()) {
            const std::string a = walker.option();
            if (a == "--json")
                args.jsonPath = walker.value();
            else if (a == "--quick")
                args.quick = true;
            else if (a == "--seconds")
                args.seconds = quell::io::parseDouble("--seconds", walker.value(), 0.5, 86400.0);
            else if (a == "--blocks") {
                std::stringstream list(walker.value());
                for (std::string item; std::getline(list, item, ',');)
                    args.blocks.push_back(quell::io::parseInt("--blocks", item, 16, 8192));
            } else if (a == "--safety-blocks") {
                const std::string v = walker.value();
                args.safetyBlocks = v == "auto" ? -1 : quell::io::parseInt("--safety-blocks", v, 0, quell::engine::RealtimeEngine::kMaxSafetyBlocks);
            } else if (a == "--only")
                args.only = walker.value();
            else
                throw quell::io::UsageError("unknown option '" + a + "' (see --help)");
        }
    } catch (const quell::io::UsageError& e) {
        std::fprintf(stderr, "quell-bench %s: %s\n", argv[1], e.what());
        return 2;
    }
    try {
        return it->second.run(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "quell-bench %s: %s\n", argv[1], e.what());
        return 1;
    }
}
