// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/RlsRowKernels.h"

#include "dsp/TargetClones.h"

// GCC vector extensions: portable across x86 levels, compiled for AVX2 and the baseline (QUELL_CLONES).

namespace quell::dsp::detail {
namespace {

template <typename T>
struct Vec;
template <>
struct Vec<float> {
    typedef float type __attribute__((vector_size(32), may_alias));
    static constexpr std::size_t lanes = 8;
};
template <>
struct Vec<double> {
    typedef double type __attribute__((vector_size(32), may_alias));
    static constexpr std::size_t lanes = 4;
};

template <typename T>
inline T horizontal(const typename Vec<T>::type& v)
{
    T s = T(0);
    for (std::size_t i = 0; i < Vec<T>::lanes; ++i)
        s += v[i];
    return s;
}

template <typename T>
inline T rowUpdateDotImpl(T* p, const T* v, T vi, T r, T invLambda, const T* u, std::size_t n)
{
    using V = typename Vec<T>::type;
    constexpr std::size_t L = Vec<T>::lanes;
    V acc0{}, acc1{};
    for (std::size_t j = 0; j < n; j += 2 * L) {
        V p0 = *reinterpret_cast<const V*>(p + j);
        V p1 = *reinterpret_cast<const V*>(p + j + L);
        const V v0 = *reinterpret_cast<const V*>(v + j);
        const V v1 = *reinterpret_cast<const V*>(v + j + L);
        // (vi * v_j) first: the product is symmetric in (i, j), so P stays exactly symmetric.
        p0 = (p0 - (vi * v0) * r) * invLambda;
        p1 = (p1 - (vi * v1) * r) * invLambda;
        *reinterpret_cast<V*>(p + j) = p0;
        *reinterpret_cast<V*>(p + j + L) = p1;
        acc0 += p0 * *reinterpret_cast<const V*>(u + j);
        acc1 += p1 * *reinterpret_cast<const V*>(u + j + L);
    }
    return horizontal<T>(acc0 + acc1);
}

template <typename T>
inline void rankUpdateRowImpl(T* p, const T* z, std::size_t zStride, const T* zi, int count, T mu, std::size_t n)
{
    using V = typename Vec<T>::type;
    constexpr std::size_t L = Vec<T>::lanes;
    for (std::size_t j = 0; j < n; j += 2 * L) {
        V p0 = *reinterpret_cast<const V*>(p + j);
        V p1 = *reinterpret_cast<const V*>(p + j + L);
        const T* zl = z + j;
        for (int l = 0; l < count; ++l, zl += zStride) {
            p0 -= zi[l] * *reinterpret_cast<const V*>(zl);
            p1 -= zi[l] * *reinterpret_cast<const V*>(zl + L);
        }
        *reinterpret_cast<V*>(p + j) = p0 * mu;
        *reinterpret_cast<V*>(p + j + L) = p1 * mu;
    }
}

template <typename T>
inline T dotImpl(const T* a, const T* b, std::size_t n)
{
    using V = typename Vec<T>::type;
    constexpr std::size_t L = Vec<T>::lanes;
    V acc0{}, acc1{};
    for (std::size_t j = 0; j < n; j += 2 * L) {
        acc0 += *reinterpret_cast<const V*>(a + j) * *reinterpret_cast<const V*>(b + j);
        acc1 += *reinterpret_cast<const V*>(a + j + L) * *reinterpret_cast<const V*>(b + j + L);
    }
    return horizontal<T>(acc0 + acc1);
}

} // namespace

QUELL_CLONES float rowUpdateDot(float* p, const float* v, float vi, float r, float invLambda, const float* u,
                                std::size_t n)
{
    return rowUpdateDotImpl(p, v, vi, r, invLambda, u, n);
}
QUELL_CLONES double rowUpdateDot(double* p, const double* v, double vi, double r, double invLambda,
                                 const double* u, std::size_t n)
{
    return rowUpdateDotImpl(p, v, vi, r, invLambda, u, n);
}
QUELL_CLONES void rankUpdateRow(float* p, const float* z, std::size_t zStride, const float* zi, int count, float mu,
                                std::size_t n)
{
    rankUpdateRowImpl(p, z, zStride, zi, count, mu, n);
}
QUELL_CLONES void rankUpdateRow(double* p, const double* z, std::size_t zStride, const double* zi, int count,
                                double mu, std::size_t n)
{
    rankUpdateRowImpl(p, z, zStride, zi, count, mu, n);
}
QUELL_CLONES float dot(const float* a, const float* b, std::size_t n) { return dotImpl(a, b, n); }
QUELL_CLONES double dot(const double* a, const double* b, std::size_t n) { return dotImpl(a, b, n); }

} // namespace quell::dsp::detail
