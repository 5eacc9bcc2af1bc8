// SPDX-License-Identifier: GPL-3.0-or-later
// Host code only (compiled by nvcc with the kernels): the scan's correction matrices in float64.
#include "iir/IirTransitionTables.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "iir/IirScanKernel.cuh"

namespace quell::gpu::iir {
namespace {

using Matrix = std::vector<double>;

Matrix identity(int d)
{
    Matrix m(static_cast<std::size_t>(d) * d, 0.0);
    for (int i = 0; i < d; ++i)
        m[static_cast<std::size_t>(i) * d + i] = 1.0;
    return m;
}

Matrix multiply(const Matrix& x, const Matrix& y, int d)
{
    Matrix r(static_cast<std::size_t>(d) * d, 0.0);
    for (int i = 0; i < d; ++i)
        for (int k = 0; k < d; ++k) {
            const double xik = x[static_cast<std::size_t>(i) * d + k];
            if (xik == 0.0)
                continue;
            for (int j = 0; j < d; ++j)
                r[static_cast<std::size_t>(i) * d + j] += xik * y[static_cast<std::size_t>(k) * d + j];
        }
    return r;
}

Matrix power(Matrix base, long long e, int d)
{
    Matrix r = identity(d);
    while (e > 0) {
        if (e & 1)
            r = multiply(r, base, d);
        base = multiply(base, base, d);
        e >>= 1;
    }
    return r;
}

double maxAbs(const Matrix& m)
{
    double v = 0.0;
    for (double x : m)
        v = std::max(v, std::abs(x));
    return v;
}

} // namespace

TransitionTables buildTransitionTables(const std::vector<double>& a, int d, int k, int warps, double negligible)
{
    TransitionTables t;
    const std::size_t dd = static_cast<std::size_t>(d) * d;
    t.matrices.assign(static_cast<std::size_t>(matrixCount(warps)) * dd, 0.0);
    auto put = [&](int index, const Matrix& m) {
        std::copy(m.begin(), m.end(), t.matrices.begin() + static_cast<std::ptrdiff_t>(index * dd));
    };
    const Matrix stepK = power(a, k, d);
    Matrix m = identity(d);
    for (int j = 0; j <= 32; ++j) {
        put(laneMatrix(j), m);
        if (maxAbs(m) > negligible)
            t.nonNegligible |= std::uint64_t(1) << laneMatrix(j);
        m = multiply(m, stepK, d);
    }
    const Matrix stepWarp = power(stepK, 32, d);
    m = identity(d);
    for (int w = 0; w <= warps; ++w) {
        put(warpMatrix(w), m);
        if (maxAbs(m) > negligible)
            t.nonNegligible |= std::uint64_t(1) << warpMatrix(w);
        m = multiply(m, stepWarp, d);
    }
    const Matrix stepTile = power(stepWarp, warps, d);
    m = identity(d);
    t.lookbackCut = 33;
    bool allSmallSoFar = true; // scanning from the far end: every distance >= j is negligible
    std::vector<Matrix> tiles;
    for (int j = 0; j <= 32; ++j) {
        put(tileMatrix(warps, j), m);
        tiles.push_back(m);
        m = multiply(m, stepTile, d);
    }
    for (int j = 32; j >= 1; --j) {
        allSmallSoFar = allSmallSoFar && maxAbs(tiles[static_cast<std::size_t>(j)]) <= negligible;
        if (!allSmallSoFar)
            break;
        t.lookbackCut = j;
    }
    return t;
}

std::vector<double> buildDoublingTables(const std::vector<double>& a, int d, long long tile, int count)
{
    std::vector<double> out;
    Matrix m = power(a, tile, d);
    for (int k = 0; k < count; ++k) {
        out.insert(out.end(), m.begin(), m.end());
        m = multiply(m, m, d);
    }
    return out;
}

} // namespace quell::gpu::iir
