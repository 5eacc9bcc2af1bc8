// SPDX-License-Identifier: GPL-3.0-or-later
// quell-bench blockrls-cublas: cuBLAS's time for the two passes over P of one block of the block-exact
// RLS (BlockRlsCublasProbe.h), beside the floor of P's traffic at the copy bandwidth measured in the same
// run. The fused kernels' own times for the same passes come from ncu on `quell-bench blockrls` rows
// of the same N, k and streams (Kernels/rls/NOTES.md gives both for each run).
#include <cstdio>
#include <vector>

#include "BenchRegistry.h"
#include "BenchReport.h"
#include "BlockRlsCublasProbe.h"
#include "RlsDeviceProbes.h"

QUELL_BENCH_COMMAND(blockrls_cublas, "cuBLAS for the block RLS's two passes over P (V = P U, rank-k update), beside P's copy floor")
{
    const double copyGBps = quell::gpu::measureCopyBandwidthGBps(std::size_t{1} << 30, 5);
    std::printf("device-to-device copy: %.0f GB/s (read + write)\n", copyGBps);
    struct Row {
        int taps, k, streams;
    };
    std::vector<Row> rows = args.quick ? std::vector<Row>{{512, 32, 1}, {512, 32, 16}}
                                       : std::vector<Row>{{512, 32, 1}, {1024, 32, 1}, {2048, 32, 1}, {4096, 32, 1}, {8192, 32, 1},
                                                          {512, 32, 64}, {512, 32, 256}, {1024, 32, 64}, {2048, 32, 64}};
    quell::bench::BenchReport report("blockrls-cublas");
    for (const Row& r : rows) {
        const quell::gpu::CublasBlockPasses t = quell::gpu::measureCublasBlockPasses(r.taps, r.k, r.streams, args.quick ? 5 : 50);
        const double S = static_cast<double>((r.taps + 63) / 64 * 64);
        const double pBytes = S * S * 4.0 * r.streams;
        // The product reads P once; the update reads and writes it (the copy bandwidth counts both).
        const double productFloorUs = pBytes / (copyGBps * 1e3), updateFloorUs = 2.0 * pBytes / (copyGBps * 1e3);
        report.add("cuBLAS passes over P, one block",
                   {{"N", static_cast<long long>(r.taps)},
                    {"k", static_cast<long long>(r.k)},
                    {"streams", static_cast<long long>(r.streams)},
                    {"V = P U us", t.productUs},
                    {"P floor (read) us", productFloorUs},
                    {"rank-k update us", t.updateUs},
                    {"P floor (read + write) us", updateFloorUs}});
        std::printf("  N=%d k=%d S=%d: V = P U %.1f us (floor %.1f), update %.1f us (floor %.1f)\n", r.taps, r.k, r.streams, t.productUs,
                    productFloorUs, t.updateUs, updateFloorUs);
    }
    report.print();
    report.writeJson(args.jsonPath);
    return 0;
}
