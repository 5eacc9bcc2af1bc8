// SPDX-License-Identifier: GPL-3.0-or-later
#include "dsp/BlockRls.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dsp/RlsRowKernels.h"

namespace quell::dsp {

template <typename T>
void BlockRls<T>::prepare(const RlsSettings& settings, int blockSize)
{
    validate(settings);
    if (blockSize < 1 || blockSize > kMaxBlock)
        throw std::invalid_argument("block RLS: the block size must be 1 to " + std::to_string(kMaxBlock) + " samples (got "
                                    + std::to_string(blockSize) + ")");
    settings_ = settings;
    taps_ = settings.totalTaps();
    block_ = blockSize;
    stride_ = (static_cast<std::size_t>(taps_) + 15) / 16 * 16;
    lambda_ = settings.lambda;
    traceBound_ = traceBound(settings);
    p_.resize(stride_ * stride_);
    w0_.resize(stride_);
    w_.resize(stride_);
    u_.prepare(taps_, settings.channels, stride_);
    const std::size_t k = static_cast<std::size_t>(block_);
    U_.resize(k * stride_);
    V_.resize(k * stride_);
    Z_.resize(k * stride_);
    zi_.assign(k, T(0));
    for (auto* m : {&G_, &A_, &C_})
        m->assign(k * k, 0.0);
    for (auto* v : {&y0_, &d_, &b_, &s_})
        v->assign(k, 0.0);
    paused_.assign(k, 0);
    scratch_.assign(stride_, 0.0);
    reset();
}

template <typename T>
void BlockRls<T>::reinitialiseP()
{
    p_.zero();
    const T diag = T(1.0 / settings_.delta);
    for (int i = 0; i < taps_; ++i)
        p_[static_cast<std::size_t>(i) * stride_ + i] = diag;
    pending_ = false;
    pendingCount_ = 0;
    pendingMu_ = T(1);
}

template <typename T>
void BlockRls<T>::clearRecurrence()
{
    std::fill(A_.begin(), A_.end(), 0.0);
    std::fill(C_.begin(), C_.end(), 0.0);
    std::fill(b_.begin(), b_.end(), 0.0);
    std::fill(s_.begin(), s_.end(), 0.0);
    mu_ = 1.0;
    columns_ = 0;
}

template <typename T>
void BlockRls<T>::reset()
{
    reinitialiseP();
    w0_.zero();
    w_.zero();
    u_.reset();
    U_.zero();
    V_.zero();
    Z_.zero();
    clearRecurrence();
    health_ = {};
    restartDue_ = false;
    lambdaNow_ = lambda_;
    sinceCheck_ = 0;
}

template <typename T>
void BlockRls<T>::combineColumns(const double* coefficients, int count) const
{
    std::fill(scratch_.begin(), scratch_.begin() + taps_, 0.0);
    for (int a = 0; a < count; ++a) {
        const double ca = coefficients[a];
        if (ca == 0.0)
            continue;
        const T* v = V_.data() + static_cast<std::size_t>(a) * stride_;
        for (int i = 0; i < taps_; ++i)
            scratch_[static_cast<std::size_t>(i)] += ca * static_cast<double>(v[i]);
    }
}

template <typename T>
void BlockRls<T>::addBlockWeights(T* dst, int steps) const
{
    // dst = w0 + V b over the steps taken, accumulated in float64 and rounded once.
    combineColumns(b_.data(), steps);
    for (int i = 0; i < taps_; ++i)
        dst[i] = static_cast<T>(static_cast<double>(w0_[static_cast<std::size_t>(i)]) + scratch_[static_cast<std::size_t>(i)]);
}

template <typename T>
void BlockRls<T>::commitWeights(int steps)
{
    addBlockWeights(w0_.data(), steps);
    std::fill(b_.begin(), b_.end(), 0.0);
}

template <typename T>
void BlockRls<T>::restartCovariance()
{
    commitWeights(columns_);
    std::copy(w0_.data(), w0_.data() + stride_, w_.data());
    reinitialiseP();
    restartDue_ = false;
    clearRecurrence();
}

template <typename T>
void BlockRls<T>::appendColumn(int column, T d, const T* x)
{
    const bool badMic = !std::isfinite(d);
    if (badMic)
        d = T(0);
    if (u_.push(x) || badMic)
        ++health_.sanitisedSamples;
    const std::size_t j = static_cast<std::size_t>(column);
    std::copy(u_.data(), u_.data() + stride_, U_.data() + j * stride_);
    d_[j] = static_cast<double>(d);
    paused_[j] = !adapting_ || u_.energy() <= settings_.silenceFloor * static_cast<double>(taps_);
}

template <typename T>
void BlockRls<T>::computeColumns(int begin, int end)
{
    // One pass over the rows of P: the previous block's deferred update (with the first columns of a
    // block), then row i of V = P0 U for the new columns.
    const bool first = begin == 0;
    const bool update = first && pending_;
    double trace = 0.0;
    for (int i = 0; i < taps_; ++i) {
        T* p = p_.data() + static_cast<std::size_t>(i) * stride_;
        if (update) {
            for (int l = 0; l < pendingCount_; ++l)
                zi_[static_cast<std::size_t>(l)] = Z_[static_cast<std::size_t>(l) * stride_ + i];
            detail::rankUpdateRow(p, Z_.data(), stride_, zi_.data(), pendingCount_, pendingMu_, stride_);
        }
        if (first)
            trace += static_cast<double>(p[i]);
        for (int j = begin; j < end; ++j)
            V_[static_cast<std::size_t>(j) * stride_ + i] = detail::dot(p, U_.data() + static_cast<std::size_t>(j) * stride_, stride_);
    }
    if (first) {
        pending_ = false;
        traceP0_ = trace;
    }
    for (int j = begin; j < end; ++j) {
        const T* v = V_.data() + static_cast<std::size_t>(j) * stride_;
        for (int a = 0; a <= j; ++a)
            row(G_, j)[a] = static_cast<double>(detail::dot(U_.data() + static_cast<std::size_t>(a) * stride_, v, stride_));
        y0_[static_cast<std::size_t>(j)] = static_cast<double>(detail::dot(w0_.data(), U_.data() + static_cast<std::size_t>(j) * stride_, stride_));
    }
}

template <typename T>
double BlockRls<T>::traceBefore(int j) const
{
    // trace(P_{j-1}) = mu (trace(P0) - sum_{l<j} s_l |V c_l|^2)
    double q = 0.0;
    for (int l = 0; l < j; ++l) {
        const double sl = s_[static_cast<std::size_t>(l)];
        if (!(sl > 0.0))
            continue;
        combineColumns(row(C_, l), l + 1);
        double norm = 0.0;
        for (int i = 0; i < taps_; ++i)
            norm += scratch_[static_cast<std::size_t>(i)] * scratch_[static_cast<std::size_t>(i)];
        q += sl * norm;
    }
    return mu_ * (traceP0_ - q);
}

template <typename T>
T BlockRls<T>::step(int j)
{
    if (++sinceCheck_ > settings_.traceCheckSamples) {
        lambdaNow_ = traceBefore(j) > traceBound_ ? 1.0 : lambda_;
        sinceCheck_ = 1;
    }
    const std::size_t ju = static_cast<std::size_t>(j);
    const double* g = row(G_, j);
    double e = d_[ju] - y0_[ju];
    for (int a = 0; a < j; ++a)
        e -= b_[static_cast<std::size_t>(a)] * g[a];
    if (paused_[ju] || restartDue_) {
        ++health_.pausedSamples;
        return static_cast<T>(e);
    }
    // c = mu (i_j - A g): A has its support on the earlier steps.
    double* c = row(C_, j);
    for (int a = 0; a < j; ++a) {
        const double* rowA = row(A_, a);
        double sum = 0.0;
        for (int b = 0; b < j; ++b)
            sum += rowA[b] * g[b];
        c[a] = -mu_ * sum;
    }
    c[j] = mu_;
    double gamma = 0.0;
    for (int a = 0; a <= j; ++a)
        gamma += g[a] * c[a];
    const double alpha = lambdaNow_ + gamma;
    if (!(alpha >= 0.5 * lambdaNow_) || !std::isfinite(alpha) || !std::isfinite(e)) {
        ++health_.reinitialisations;
        restartDue_ = true;
        std::fill(c, c + j + 1, 0.0);
        if (!std::isfinite(e)) {
            w0_.zero();
            std::fill(b_.begin(), b_.end(), 0.0);
            std::fill(y0_.begin() + j, y0_.end(), 0.0);
            return static_cast<T>(d_[ju]);
        }
        return static_cast<T>(e);
    }
    const double r = 1.0 / alpha;
    const double er = e * r;
    for (int a = 0; a <= j; ++a)
        b_[static_cast<std::size_t>(a)] += c[a] * er;
    const double s = r / mu_;
    s_[ju] = s;
    for (int a = 0; a <= j; ++a) {
        double* rowA = row(A_, a);
        const double sca = s * c[a];
        for (int b = 0; b <= j; ++b)
            rowA[b] += sca * c[b];
    }
    mu_ /= lambdaNow_;
    return static_cast<T>(e);
}

template <typename T>
void BlockRls<T>::finishBlock()
{
    commitWeights(columns_);
    if (restartDue_) {
        reinitialiseP();
        restartDue_ = false;
        clearRecurrence();
        return;
    }
    // The deferred update: z_l = sqrt(s_l) V c_l for every step that adapted.
    int count = 0;
    for (int l = 0; l < columns_; ++l) {
        const double sl = s_[static_cast<std::size_t>(l)];
        if (!(sl > 0.0))
            continue;
        combineColumns(row(C_, l), l + 1);
        const double scale = std::sqrt(sl);
        T* z = Z_.data() + static_cast<std::size_t>(count) * stride_;
        for (int i = 0; i < taps_; ++i)
            z[i] = static_cast<T>(scale * scratch_[static_cast<std::size_t>(i)]);
        ++count;
    }
    pendingCount_ = count;
    pendingMu_ = static_cast<T>(mu_);
    pending_ = count > 0 || mu_ != 1.0;
    clearRecurrence();
}

template <typename T>
void BlockRls<T>::run(std::span<const T> mic, std::span<const T> ref, std::span<T> out, std::size_t channels)
{
    const std::size_t n = mic.size();
    std::size_t pos = 0; // next input sample to append
    while (pos < n) {
        const int begin = columns_;
        const int end = begin + static_cast<int>(std::min<std::size_t>(n - pos, static_cast<std::size_t>(block_ - begin)));
        for (int j = begin; j < end; ++j) {
            const std::size_t at = pos + static_cast<std::size_t>(j - begin);
            appendColumn(j, mic[at], &ref[at * channels]);
        }
        computeColumns(begin, end);
        for (int j = begin; j < end; ++j) {
            out[pos + static_cast<std::size_t>(j - begin)] = step(j);
            columns_ = j + 1;
        }
        pos += static_cast<std::size_t>(end - begin);
        if (columns_ == block_)
            finishBlock();
    }
    // The visible weights: w0 + V b of the block so far.
    addBlockWeights(w_.data(), columns_);
}

template <typename T>
void BlockRls<T>::process(std::span<const T> mic, std::span<const T> ref, std::span<T> out)
{
    if (mic.size() != ref.size() || out.size() < mic.size())
        throw std::invalid_argument("BlockRls::process: mic, ref and out must have the same length");
    if (settings_.channels != 1)
        throw std::invalid_argument("BlockRls::process: this filter has " + std::to_string(settings_.channels)
                                    + " far-end channels: use processInterleaved");
    run(mic, ref, out, 1);
}

template <typename T>
void BlockRls<T>::processInterleaved(std::span<const T> mic, std::span<const T> ref, std::span<T> out)
{
    const std::size_t channels = static_cast<std::size_t>(settings_.channels);
    if (ref.size() != mic.size() * channels || out.size() < mic.size())
        throw std::invalid_argument("BlockRls::processInterleaved: ref must hold channels x mic samples, out at least mic's");
    run(mic, ref, out, channels);
}

template class BlockRls<float>;
template class BlockRls<double>;

} // namespace quell::dsp
