// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench: runs one benchmark family on the GPU with its peers and physical limits in the same run.
//   quell-bench rls|iir|fir [--json PATH] [--quick]
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "BenchRegistry.h"

namespace quell::bench {
std::map<std::string, BenchCommand>& registry()
{
    static std::map<std::string, BenchCommand> commands;
    return commands;
}
} // namespace quell::bench

static void usage()
{
    std::fprintf(stderr, "usage: quell-bench <command> [--json PATH] [--quick]\ncommands:\n");
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
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json" && i + 1 < argc)
            args.jsonPath = argv[++i];
        else if (a == "--quick")
            args.quick = true;
        else
            args.args.push_back(a);
    }
    try {
        return it->second.run(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "quell-bench %s: %s\n", argv[1], e.what());
        return 1;
    }
}
