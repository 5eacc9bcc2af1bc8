// SPDX-License-Identifier: GPL-3.0-or-later
// GpuIir: host side of the single-pass IIR scan (IirScanKernel.cuh): coefficient sets, correction tables,
// carried state (ping-pong so a launch never reads what it writes), look-back flags with an epoch so they
// never need clearing between launches.
#include "iir/GpuIir.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"
#include "common/HostStaging.cuh"
#include "iir/IirArithmeticChoice.h"
#include "iir/IirMultiBlockKernels.cuh"
#include "iir/IirScanKernel.cuh"
#include "iir/IirSystems.cuh"
#include "iir/IirTransitionTables.h"
#include "iir/IirWarpScanKernel.cuh"

namespace quell::gpu {

using namespace iir;

namespace {

enum class Shape { Direct, Cascade };

// Kernel shape per state size: samples per thread and threads per block (registers bound the larger D).
struct KernelShape {
    int k, threads;
};
KernelShape shapeFor(int d, IirArithmetic arithmetic)
{
    // float64 needs twice the registers per value: shorter runs per thread keep occupancy up.
    if (arithmetic != IirArithmetic::Float32)
        return d <= 4 ? KernelShape{8, 256} : KernelShape{8, 128};
    return d <= 4 ? KernelShape{16, 256} : KernelShape{32, 128};
}
// Warp-per-tile kernel: samples per lane (K), sub-tiles per warp tile (SUB), one copy group per sub-tile
// (staged). Must agree with pickKernel(). Measured on the H100 (Kernels/iir/NOTES.md): float32 direct state
// sizes 1 and 2 run fastest with 4 sub-tiles of 32 samples per lane (4096 samples per warp: half the
// Kogge-Stone steps per sample of 16 per lane, a quarter of the look-backs of 2048-sample tiles), state size
// 4 and cascades of 1-2 sections with 4 sub-tiles of 16, state size 8 with one sub-tile of 32 per lane (half
// the Kogge-Stone work per sample of 16); float64 keeps 8 per lane and one sub-tile (registers).
struct WarpShape {
    int k, sub;
};
bool longRunShape(Shape shape, int d, IirArithmetic arithmetic)
{
    return shape == Shape::Direct && d <= 2 && arithmetic == IirArithmetic::Float32;
}
constexpr WarpShape kAltWarpShapes[2] = {{32, 4}, {16, 4}};
int altWarpShape(Shape shape, int d, IirArithmetic arithmetic, const IirTuning& tuning)
{
    return longRunShape(shape, d, arithmetic) ? tuning.longRunShape : 0;
}
// Early stores measured faster for float32 direct state sizes 1, 2 and 4 (+1 to +3 points of copy at
// 2^26-2^28) and level at state size 8 and on cascades, which keep the single store at the end.
int warpOptsFor(Shape shape, int d, IirArithmetic arithmetic, const IirTuning& tuning)
{
    const bool measuredFaster = shape == Shape::Direct && d <= 4 && arithmetic == IirArithmetic::Float32;
    const bool early = tuning.earlyStores < 0 ? measuredFaster : tuning.earlyStores > 0;
    return early ? kWarpOptEarlyStore : 0;
}
WarpShape warpShapeFor(Shape shape, int d, IirArithmetic arithmetic, int alt)
{
    if (arithmetic != IirArithmetic::Float32)
        return {8, 1};
    if (longRunShape(shape, d, arithmetic))
        return kAltWarpShapes[alt];
    return d <= 4 ? WarpShape{16, 4} : WarpShape{32, 1};
}
// Short signals at state size 1 (float32): 2048-sample warp tiles leave the SMs short of warps below 2^23
// samples, where 2 sub-tiles measured faster; no second shape elsewhere ({0, 0}).
WarpShape shortWarpShapeFor(Shape shape, int d, IirArithmetic arithmetic)
{
    return shape == Shape::Direct && d == 1 && arithmetic == IirArithmetic::Float32 ? WarpShape{16, 2} : WarpShape{0, 0};
}
constexpr long long kShortSignalSamples = 1LL << 23; // samples x channels per launch

template <class Sys, int K, int THREADS, typename Real>
void launchScan(const void* params, long long tiles, long long persistentBlocks, cudaStream_t stream)
{
    const auto& p = *static_cast<const ScanParams<Real>*>(params);
    if (persistentBlocks > 0) {
        QUELL_CUDA_CHECK(cudaMemsetAsync(p.tickets, 0, sizeof(unsigned long long), stream));
        iirScanKernel<Sys, K, THREADS, true, Real><<<static_cast<unsigned>(persistentBlocks), THREADS, 0, stream>>>(p);
    } else {
        iirScanKernel<Sys, K, THREADS, false, Real><<<static_cast<unsigned>(tiles), THREADS, 0, stream>>>(p);
    }
    QUELL_CUDA_CHECK_LAUNCH();
}

template <class Sys, int K, int SUB, typename Real, bool STAGED = false, bool OPTS = false>
void launchWarpScan(const void* params, long long tiles, cudaStream_t stream)
{
    constexpr int W = kWarpTileWarpsPerBlock;
    const auto& p = *static_cast<const ScanParams<Real>*>(params);
    const long long blocks = (tiles + W - 1) / W;
    constexpr int bytes = OPTS ? warpTileStageBytes<K, SUB, W>() : 0; // dynamic shared memory
    if constexpr (bytes > 48 * 1024) {
        static const bool raised = [] {
            QUELL_CUDA_CHECK(cudaFuncSetAttribute(iirWarpScanKernel<Sys, K, SUB, STAGED, Real, W, OPTS>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
            return true;
        }();
        (void)raised;
    }
    iirWarpScanKernel<Sys, K, SUB, STAGED, Real, W, OPTS><<<static_cast<unsigned>(blocks), 32 * W, bytes, stream>>>(p);
    QUELL_CUDA_CHECK_LAUNCH();
}

template <class Sys, int K, int THREADS, typename Real>
void launchMultiBlock(const void* params, long long tiles, const void* doubling, long long doublingStride, cudaStream_t stream)
{
    const auto& p = *static_cast<const ScanParams<Real>*>(params);
    int log2Per = 0;
    while ((static_cast<long long>(kLookAheadThreads) << log2Per) < p.tilesPerChannel)
        ++log2Per;
    iirTilePassKernel<Sys, K, THREADS, Real, TilePass::Reduce><<<static_cast<unsigned>(tiles), THREADS, 0, stream>>>(p);
    QUELL_CUDA_CHECK_LAUNCH();
    iirLookAheadKernel<Sys::D, Real><<<static_cast<unsigned>(p.channels), kLookAheadThreads, 0, stream>>>(
        p, static_cast<const Real*>(doubling), doublingStride, log2Per);
    QUELL_CUDA_CHECK_LAUNCH();
    iirTilePassKernel<Sys, K, THREADS, Real, TilePass::Apply><<<static_cast<unsigned>(tiles), THREADS, 0, stream>>>(p);
    QUELL_CUDA_CHECK_LAUNCH();
}

// Blocks of the persistent kernel the whole device holds at once.
template <class Sys, int K, int THREADS, typename Real>
int residentBlocks()
{
    int perSm = 0, device = 0, sms = 0;
    QUELL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, iirScanKernel<Sys, K, THREADS, true, Real>, THREADS, 0));
    QUELL_CUDA_CHECK(cudaGetDevice(&device));
    QUELL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return std::max(1, perSm * sms);
}

using LaunchFn = void (*)(const void*, long long, long long, cudaStream_t);
using WarpLaunchFn = void (*)(const void*, long long, cudaStream_t);
using MultiLaunchFn = void (*)(const void*, long long, const void*, long long, cudaStream_t);
struct Kernel {
    LaunchFn launch;
    int (*resident)();
    WarpLaunchFn launchWarp;
    WarpLaunchFn launchShortWarp; // nullptr: no short-signal shape
    MultiLaunchFn launchMulti;
    WarpLaunchFn warpAlt[2];      // kAltWarpShapes, for float32 direct state sizes 1 and 2 only
};
template <class Sys, int K, int THREADS, int WARP_K, int WARP_SUB, typename Real>
Kernel kernelFor()
{
    constexpr bool staged = WARP_SUB > 2;
    // Early stores (warpOptsFor) only where measured faster; the other kernels keep the code without them.
    constexpr bool opts = std::is_same_v<Real, float> && Sys::D <= 4 && !Sys::kCascade;
    WarpLaunchFn shortWarp = nullptr;
    if constexpr (std::is_same_v<Real, float> && Sys::D == 1 && !Sys::kCascade)
        shortWarp = &launchWarpScan<Sys, 16, 2, Real, false, opts>;
    Kernel k{&launchScan<Sys, K, THREADS, Real>, &residentBlocks<Sys, K, THREADS, Real>,
             &launchWarpScan<Sys, WARP_K, WARP_SUB, Real, staged, opts>, shortWarp, &launchMultiBlock<Sys, K, THREADS, Real>, {}};
    if constexpr (std::is_same_v<Real, float> && Sys::D <= 2 && !Sys::kCascade) {
        k.warpAlt[0] = k.launchWarp;
        k.warpAlt[1] = &launchWarpScan<Sys, 16, 4, Real, true, opts>;
    }
    return k;
}

// Must agree with shapeFor() and warpShapeFor().
template <typename Real>
Kernel pickKernel(Shape shape, int d)
{
    constexpr bool f32 = std::is_same_v<Real, float>;
    constexpr int kSmall = f32 ? 16 : 8;  // samples per thread, D <= 4 (256 threads)
    constexpr int kLarge = f32 ? 32 : 8;  // samples per thread, D = 8 (128 threads)
    constexpr int kWarp = f32 ? 16 : 8;   // samples per lane, warp per tile, D <= 4
    constexpr int kWarp2 = f32 ? 32 : 8;  // samples per lane, warp per tile, direct D <= 2
    constexpr int sWarp = f32 ? 4 : 1;    // sub-tiles per warp tile, D <= 4
    constexpr int kWarp8 = f32 ? 32 : 8;  // samples per lane, warp per tile, D = 8 (one sub-tile)
    if (shape == Shape::Direct) {
        switch (d) {
        case 1: return kernelFor<DirectSystem<1>, kSmall, 256, kWarp2, sWarp, Real>();
        case 2: return kernelFor<DirectSystem<2>, kSmall, 256, kWarp2, sWarp, Real>();
        case 4: return kernelFor<DirectSystem<4>, kSmall, 256, kWarp, sWarp, Real>();
        case 8: return kernelFor<DirectSystem<8>, kLarge, 128, kWarp8, 1, Real>();
        default: break;
        }
    } else {
        switch (d) {
        case 2: return kernelFor<CascadeSystem<1>, kSmall, 256, kWarp, sWarp, Real>();
        case 4: return kernelFor<CascadeSystem<2>, kSmall, 256, kWarp, sWarp, Real>();
        case 8: return kernelFor<CascadeSystem<4>, kLarge, 128, kWarp8, 1, Real>();
        default: break;
        }
    }
    throw std::logic_error("GpuIir: no kernel for this state size");
}

// What Auto runs, from the H100 measurements in Kernels/iir/NOTES.md: a warp per tile for the direct form
// and for cascades (float32 at every order; float64 except state size 4, where a block per tile measured 4%
// faster on the direct form).
IirSchedule autoSchedule(int d, IirArithmetic arithmetic)
{
    if (arithmetic != IirArithmetic::Float32 && d == 4)
        return IirSchedule::OneTilePerBlock;
    return IirSchedule::WarpPerTile;
}

// The accuracy targets (relative L2 against float64) by order; Auto keeps float32 only well inside them.
double toleranceFor(int order) { return order <= 2 ? 1e-5 : order <= 4 ? 1e-4 : 1e-3; }

int paddedSize(int n) { return n <= 1 ? 1 : n <= 2 ? 2 : n <= 4 ? 4 : 8; }

} // namespace

struct GpuIir::Impl {
    Shape shape = Shape::Direct;
    IirArithmetic arithmetic = IirArithmetic::Float32;
    int userOrder = 0;          // M as given (direct) or 2 * sections
    int d = 0;                  // padded state size
    int halo = 0;
    int ncoef = 0;
    KernelShape kshape{};       // block per tile, persistent and multi-block
    WarpShape wshape{};         // warp per tile
    int altShape = 0;           // kAltWarpShapes index
    int warpOpts = 0;           // ScanParams::warpOpts
    WarpShape shortShape{};     // warp per tile on short signals ({0, 0}: none)
    bool warpChain[2] = {false, false}; // per warp shape: some set's look-back reaches past 32 tiles
    int channels = 0;
    std::size_t maxSamples = 0;
    long long maxTilesPerChannel = 0;
    std::size_t realSize = 4;
    int stateStride = 0;
    int cur = 0;
    unsigned epoch = 1;
    std::string baseName, variantName;
    Kernel kernel{};
    int resident = 1;          // blocks of the persistent kernel resident at once
    IirSchedule schedule = IirSchedule::Auto;
    IirTuning tuning;

    Stream stream;
    // Correction tables per coefficient set: for the block tile, for the warp tile, and T_{B 2^k} for the
    // multi-block look-ahead.
    DeviceBuffer<unsigned char> coeffs, mats, warpMats[2], doubling, state[2], aggregates, inclusives;
    DeviceBuffer<unsigned long long> masks, warpMasks[2], tickets;
    DeviceBuffer<int> cuts, warpCuts[2], channelSet;
    DeviceBuffer<unsigned> flags;
    DeviceBuffer<float> stagingIn, stagingOut;

    // Uploads host doubles as the kernel's Real.
    void upload(DeviceBuffer<unsigned char>& dst, const std::vector<double>& values)
    {
        dst.allocate(values.size() * realSize);
        if (realSize == sizeof(double)) {
            QUELL_CUDA_CHECK(cudaMemcpy(dst.get(), values.data(), values.size() * sizeof(double), cudaMemcpyHostToDevice));
        } else {
            std::vector<float> f(values.begin(), values.end());
            QUELL_CUDA_CHECK(cudaMemcpy(dst.get(), f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
        }
    }

    // coefficientSets: NCOEF values per set (already float32-rounded); transitions: one-step matrices.
    // Both forms end alike: Auto runs float32 unless some set loses more than a tenth of the order's
    // tolerance in it (worstFloat32Loss), then the device state is built.
    // What prepare collects per coefficient set before the device state is built: the coefficients, the
    // look-ahead step matrix, and the worst float32 loss of any set (only needed for Auto arithmetic).
    struct CollectedSets {
        std::size_t count = 0;
        std::vector<double> coefficients;
        std::vector<std::vector<double>> steps;
        double worstFloat32Loss = 0.0;
    };
    template <class Float32Loss>
    void addSet(CollectedSets& sets, const std::vector<double>& c, std::vector<double> step, Float32Loss&& float32Loss) const
    {
        if (arithmetic == IirArithmetic::Auto)
            sets.worstFloat32Loss = std::max(sets.worstFloat32Loss, float32Loss());
        sets.coefficients.insert(sets.coefficients.end(), c.begin(), c.end());
        sets.steps.push_back(std::move(step));
        ++sets.count;
    }
    void settle(const CollectedSets& sets, int channels, std::size_t maxSamples)
    {
        if (arithmetic == IirArithmetic::Auto)
            arithmetic = sets.worstFloat32Loss > 0.1 * toleranceFor(userOrder) ? IirArithmetic::Float64 : IirArithmetic::Float32;
        build(sets.count, sets.coefficients, sets.steps, channels, maxSamples);
    }
    void build(std::size_t sets, const std::vector<double>& coefficientSets, const std::vector<std::vector<double>>& steps,
               int channelCount, std::size_t maxSamplesPerCall)
    {
        if (channelCount <= 0)
            throw std::invalid_argument("GpuIir: channel count must be positive");
        if (sets != 1 && sets != static_cast<std::size_t>(channelCount))
            throw std::invalid_argument("GpuIir: give one coefficient set, or one per channel");
        if (maxSamplesPerCall == 0)
            throw std::invalid_argument("GpuIir: maxSamples must be positive");
        channels = channelCount;
        realSize = arithmetic == IirArithmetic::Float32 ? sizeof(float) : sizeof(double);
        kshape = shapeFor(d, arithmetic);
        altShape = altWarpShape(shape, d, arithmetic, tuning);
        warpOpts = warpOptsFor(shape, d, arithmetic, tuning);
        wshape = warpShapeFor(shape, d, arithmetic, altShape);
        shortShape = shortWarpShapeFor(shape, d, arithmetic);
        kernel = arithmetic == IirArithmetic::Float32 ? pickKernel<float>(shape, d) : pickKernel<double>(shape, d);
        const int warps = kshape.threads / 32;
        const long long tile = static_cast<long long>(kshape.threads) * kshape.k;
        // Both warp tiles divide the block tile; flags and carries are sized for the smaller one.
        const long long warpTile = 32LL * (shortShape.k > 0 ? std::min(wshape.k * wshape.sub, shortShape.k * shortShape.sub)
                                                            : wshape.k * wshape.sub);
        const long long blockTilesPerChannel = (static_cast<long long>(maxSamplesPerCall) + tile - 1) / tile;
        maxSamples = static_cast<std::size_t>(blockTilesPerChannel * tile);
        maxTilesPerChannel = static_cast<long long>(maxSamples) / warpTile;
        resident = kernel.resident();

        std::vector<double> allMats, allWarpMats[2], allDoubling;
        std::vector<unsigned long long> maskHost, warpMaskHost[2];
        std::vector<int> cutHost, warpCutHost[2];
        for (std::size_t s = 0; s < sets; ++s) {
            const TransitionTables t = buildTransitionTables(steps[s], d, kshape.k, warps);
            allMats.insert(allMats.end(), t.matrices.begin(), t.matrices.end());
            maskHost.push_back(t.nonNegligible);
            cutHost.push_back(t.lookbackCut);
            for (int v = 0; v < 2; ++v) {
                const WarpShape ws = v == 0 ? wshape : shortShape;
                if (ws.k == 0)
                    continue;
                const TransitionTables w = buildTransitionTables(steps[s], d, ws.k, ws.sub);
                allWarpMats[v].insert(allWarpMats[v].end(), w.matrices.begin(), w.matrices.end());
                warpMaskHost[v].push_back(w.nonNegligible);
                warpCutHost[v].push_back(w.lookbackCut);
                warpChain[v] = warpChain[v] || w.lookbackCut > 32;
            }
            const std::vector<double> dbl = buildDoublingTables(steps[s], d, tile, kDoublingMatrices);
            allDoubling.insert(allDoubling.end(), dbl.begin(), dbl.end());
        }
        upload(coeffs, coefficientSets);
        upload(mats, allMats);
        for (int v = 0; v < 2; ++v)
            if (!allWarpMats[v].empty())
                upload(warpMats[v], allWarpMats[v]);
        upload(doubling, allDoubling);
        auto uploadInts = [&](auto& dst, const auto& host) {
            dst.allocate(host.size());
            QUELL_CUDA_CHECK(cudaMemcpy(dst.get(), host.data(), host.size() * sizeof(host[0]), cudaMemcpyHostToDevice));
        };
        uploadInts(masks, maskHost);
        uploadInts(cuts, cutHost);
        for (int v = 0; v < 2; ++v) {
            if (warpMaskHost[v].empty())
                continue;
            uploadInts(warpMasks[v], warpMaskHost[v]);
            uploadInts(warpCuts[v], warpCutHost[v]);
        }
        if (sets > 1) {
            std::vector<int> map(static_cast<std::size_t>(channels));
            for (int c = 0; c < channels; ++c)
                map[static_cast<std::size_t>(c)] = c;
            channelSet.allocate(map.size());
            QUELL_CUDA_CHECK(cudaMemcpy(channelSet.get(), map.data(), map.size() * sizeof(int), cudaMemcpyHostToDevice));
        } else {
            channelSet.release();
        }
        stateStride = halo + d;
        for (auto& s : state)
            s.allocate(static_cast<std::size_t>(channels) * stateStride * realSize);
        const std::size_t tickets_ = static_cast<std::size_t>(channels) * static_cast<std::size_t>(maxTilesPerChannel);
        aggregates.allocate(tickets_ * d * realSize);
        inclusives.allocate(tickets_ * d * realSize);
        flags.allocate(tickets_);
        tickets.allocate(1);
        QUELL_CUDA_CHECK(cudaMemset(flags.get(), 0, flags.bytes()));
        epoch = 1;
        // The memsets above ran on the legacy stream; the kernels run on a non-blocking one.
        QUELL_CUDA_CHECK(cudaDeviceSynchronize());
        stagingIn.release();
        stagingOut.release();
        baseName = std::string(shape == Shape::Direct ? "direct-M" : "cascade-D") + std::to_string(d)
                   + (arithmetic == IirArithmetic::Float32 ? "-f32" : "-f64");
        setSchedule(schedule);
        resetState();
    }

    void resetState()
    {
        for (auto& s : state)
            QUELL_CUDA_CHECK(cudaMemsetAsync(s.get(), 0, s.bytes(), stream.get()));
        cur = 0;
    }

    // Auto, and warp tile shape v (0: long signals, 1: short): where some filter's response outlasts 32 warp
    // tiles (a slowly decaying filter, e.g. a 20 Hz high-pass at 48 kHz), the warp tiles' look-back becomes a
    // serial chain of inclusive states; the larger block tiles keep it short (measured 5.7 against 106 G
    // samples/s, Kernels/iir/NOTES.md).
    IirSchedule effectiveSchedule(int v = 0) const
    {
        if (schedule != IirSchedule::Auto)
            return schedule;
        const IirSchedule s = autoSchedule(d, arithmetic);
        return s == IirSchedule::WarpPerTile && warpChain[v] ? IirSchedule::OneTilePerBlock : s;
    }

    void setSchedule(IirSchedule s)
    {
        schedule = s;
        switch (effectiveSchedule()) {
        case IirSchedule::Persistent: variantName = "plr-persistent-" + baseName; break;
        case IirSchedule::WarpPerTile: variantName = "plr-warp-" + baseName; break;
        case IirSchedule::MultiBlock: variantName = "lee-sung-" + baseName; break;
        default: variantName = "plr-block-" + baseName; break;
        }
    }

    template <typename Real>
    void launchOne(const float* in, float* out, long long samples, long long stride)
    {
        const int wv = shortShape.k > 0 && samples * channels < kShortSignalSamples ? 1 : 0;
        const IirSchedule sched = effectiveSchedule(wv);
        const bool warpTiles = sched == IirSchedule::WarpPerTile;
        const WarpShape ws = wv == 0 ? wshape : shortShape;
        const long long tile = warpTiles ? 32LL * ws.k * ws.sub : static_cast<long long>(kshape.threads) * kshape.k;
        ScanParams<Real> p{};
        p.in = in;
        p.out = out;
        p.stride = stride;
        p.samples = samples;
        p.tilesPerChannel = (samples + tile - 1) / tile;
        p.channelSet = channelSet.size() > 0 ? channelSet.get() : nullptr;
        p.coeffs = reinterpret_cast<const Real*>(coeffs.get());
        p.coeffStride = ncoef;
        p.mats = reinterpret_cast<const Real*>((warpTiles ? warpMats[wv] : mats).get());
        p.matStride = static_cast<long long>(matrixCount(warpTiles ? ws.sub : kshape.threads / 32)) * d * d;
        p.matMask = (warpTiles ? warpMasks[wv] : masks).get();
        p.lookbackCut = (warpTiles ? warpCuts[wv] : cuts).get();
        p.stateIn = reinterpret_cast<const Real*>(state[cur].get());
        p.stateOut = reinterpret_cast<Real*>(state[cur ^ 1].get());
        p.stateStride = stateStride;
        p.flags = flags.get();
        p.aggregates = reinterpret_cast<Real*>(aggregates.get());
        p.inclusives = reinterpret_cast<Real*>(inclusives.get());
        p.epoch = epoch;
        p.channels = channels;
        p.tickets = tickets.get();
        p.warpOpts = warpOpts;
        p.vectorOk = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0
                     && (channels == 1 || stride % 4 == 0);
        const long long tiles = p.tilesPerChannel * channels;
        switch (sched) {
        case IirSchedule::WarpPerTile: {
            (wv == 1 ? kernel.launchShortWarp : altShape != 0 ? kernel.warpAlt[altShape] : kernel.launchWarp)(&p, tiles, stream.get());
            break;
        }
        case IirSchedule::MultiBlock:
            kernel.launchMulti(&p, tiles, doubling.get(), static_cast<long long>(kDoublingMatrices) * d * d, stream.get());
            break;
        case IirSchedule::Persistent: kernel.launch(&p, tiles, std::min<long long>(tiles, resident), stream.get()); break;
        default: kernel.launch(&p, tiles, 0, stream.get()); break;
        }
        cur ^= 1;
        if (++epoch >= (1u << 30)) {
            QUELL_CUDA_CHECK(cudaMemsetAsync(flags.get(), 0, flags.bytes(), stream.get()));
            epoch = 1;
        }
    }
};

GpuIir::GpuIir() : impl_(std::make_unique<Impl>()) {}
GpuIir::~GpuIir() = default;

void GpuIir::prepareDirect(const DirectFormCoefficients* setPtr, std::size_t setCount, int channels,
                           std::size_t maxSamples, IirArithmetic arithmetic)
{
    const std::vector<DirectFormCoefficients> sets(setPtr, setPtr + setCount);
    if (sets.empty())
        throw std::invalid_argument("GpuIir: at least one coefficient set is required");
    std::size_t order = 0;
    for (const auto& s : sets) {
        if (s.b.empty())
            throw std::invalid_argument("GpuIir: b must have at least one coefficient");
        order = std::max({order, s.b.size() - 1, s.a.empty() ? std::size_t(0) : s.a.size() - 1});
    }
    if (order > 8)
        throw std::invalid_argument("GpuIir: direct-form order above 8 (got " + std::to_string(order)
                                    + "); use a cascade of sections");
    auto im = std::make_unique<Impl>();
    im->tuning = impl_->tuning;
    im->shape = Shape::Direct;
    im->arithmetic = arithmetic;
    im->userOrder = static_cast<int>(order);
    im->d = paddedSize(static_cast<int>(order));
    const int m = im->d;
    im->halo = m;
    im->ncoef = 2 * m + 1;
    Impl::CollectedSets collected;
    for (const auto& s : sets) {
        std::vector<double> c(static_cast<std::size_t>(im->ncoef), 0.0);
        for (std::size_t k = 0; k < s.b.size(); ++k)
            c[k] = static_cast<double>(static_cast<float>(s.b[k]));
        for (std::size_t j = 1; j < s.a.size(); ++j)
            c[static_cast<std::size_t>(m) + j] = static_cast<double>(static_cast<float>(s.a[j]));
        // Companion matrix of the feedback: s'[0] = sum a_j s[j-1], s'[j] = s[j-1].
        std::vector<double> a(static_cast<std::size_t>(m) * m, 0.0);
        for (int j = 1; j <= m; ++j)
            a[static_cast<std::size_t>(j - 1)] = c[static_cast<std::size_t>(m + j)];
        for (int j = 1; j < m; ++j)
            a[static_cast<std::size_t>(j) * m + (j - 1)] = 1.0;
        im->addSet(collected, c, std::move(a), [&] { return float32LossDirect(c, m); });
    }
    im->settle(collected, channels, maxSamples);
    impl_ = std::move(im);
}

void GpuIir::prepareCascade(const std::vector<BiquadCoefficients>* setPtr, std::size_t setCount, int channels,
                            std::size_t maxSamples, IirArithmetic arithmetic)
{
    const std::vector<std::vector<BiquadCoefficients>> sets(setPtr, setPtr + setCount);
    if (sets.empty())
        throw std::invalid_argument("GpuIir: at least one cascade is required");
    std::size_t sections = 0;
    for (const auto& s : sets) {
        if (s.empty())
            throw std::invalid_argument("GpuIir: a cascade needs at least one section");
        sections = std::max(sections, s.size());
    }
    if (sections > 4)
        throw std::invalid_argument("GpuIir: at most 4 sections per cascade (got " + std::to_string(sections) + ")");
    auto im = std::make_unique<Impl>();
    im->tuning = impl_->tuning;
    im->shape = Shape::Cascade;
    im->arithmetic = arithmetic;
    im->userOrder = static_cast<int>(2 * sections);
    const int sPad = paddedSize(static_cast<int>(sections));
    im->d = 2 * sPad;
    im->halo = 2;
    im->ncoef = 5 * sPad;
    const int d = im->d;
    Impl::CollectedSets collected;
    auto r = [](double v) { return static_cast<double>(static_cast<float>(v)); };
    for (const auto& set : sets) {
        std::vector<double> c(static_cast<std::size_t>(im->ncoef), 0.0);
        for (int q = 0; q < sPad; ++q) {
            const std::size_t o = static_cast<std::size_t>(5 * q);
            if (static_cast<std::size_t>(q) < set.size()) {
                const BiquadCoefficients& b = set[static_cast<std::size_t>(q)];
                c[o] = r(b.b0); c[o + 1] = r(b.b1); c[o + 2] = r(b.b2); c[o + 3] = r(b.a1); c[o + 4] = r(b.a2);
            } else {
                c[o] = 1.0; // pass-through padding section
            }
        }
        // One step of the cascade with zero input, applied to each unit state: the columns of A.
        std::vector<double> a(static_cast<std::size_t>(d) * d, 0.0);
        for (int col = 0; col < d; ++col) {
            std::vector<double> s(static_cast<std::size_t>(d), 0.0);
            s[static_cast<std::size_t>(col)] = 1.0;
            double u = 0.0, u1 = 0.0, u2 = 0.0;
            for (int q = 0; q < sPad; ++q) {
                const std::size_t o = static_cast<std::size_t>(5 * q);
                const double v1 = s[static_cast<std::size_t>(2 * q)], v2 = s[static_cast<std::size_t>(2 * q + 1)];
                const double v = c[o] * u + c[o + 1] * u1 + c[o + 2] * u2 - c[o + 3] * v1 - c[o + 4] * v2;
                s[static_cast<std::size_t>(2 * q + 1)] = v1;
                s[static_cast<std::size_t>(2 * q)] = v;
                u = v; u1 = v1; u2 = v2;
            }
            for (int row = 0; row < d; ++row)
                a[static_cast<std::size_t>(row) * d + col] = s[static_cast<std::size_t>(row)];
        }
        im->addSet(collected, c, std::move(a), [&] { return float32LossCascade(c, sPad); });
    }
    im->settle(collected, channels, maxSamples);
    impl_ = std::move(im);
}

void GpuIir::reset()
{
    impl_->resetState();
}

void GpuIir::setState(int channel, const float* pastInputs, const float* pastOutputs, std::size_t count)
{
    Impl& im = *impl_;
    if (im.shape != Shape::Direct)
        throw std::invalid_argument("GpuIir::setState: only for the direct form");
    if (channel < 0 || channel >= im.channels)
        throw std::invalid_argument("GpuIir::setState: channel out of range");
    if (count != static_cast<std::size_t>(im.userOrder))
        throw std::invalid_argument("GpuIir::setState: state must have exactly M entries each");
    std::vector<double> st(static_cast<std::size_t>(im.stateStride), 0.0);
    for (std::size_t j = 0; j < count; ++j) {
        st[j] = pastInputs[j];
        st[static_cast<std::size_t>(im.halo) + j] = pastOutputs[j];
    }
    QUELL_CUDA_CHECK(cudaStreamSynchronize(im.stream.get()));
    unsigned char* dst = im.state[im.cur].get() + static_cast<std::size_t>(channel) * im.stateStride * im.realSize;
    if (im.realSize == sizeof(double)) {
        QUELL_CUDA_CHECK(cudaMemcpy(dst, st.data(), st.size() * sizeof(double), cudaMemcpyHostToDevice));
    } else {
        std::vector<float> f(st.begin(), st.end());
        QUELL_CUDA_CHECK(cudaMemcpy(dst, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
}

void GpuIir::processDevice(const float* in, float* out, std::size_t samples, std::size_t stride)
{
    Impl& im = *impl_;
    if (im.kernel.launch == nullptr)
        throw std::logic_error("GpuIir: prepare() first");
    if (im.channels > 1 && stride < samples)
        throw std::invalid_argument("GpuIir: channel stride shorter than the block");
    for (std::size_t done = 0; done < samples;) {
        const std::size_t n = std::min(samples - done, im.maxSamples);
        if (im.arithmetic == IirArithmetic::Float32)
            im.launchOne<float>(in + done, out + done, static_cast<long long>(n), static_cast<long long>(stride));
        else
            im.launchOne<double>(in + done, out + done, static_cast<long long>(n), static_cast<long long>(stride));
        done += n;
    }
}

void GpuIir::process(const float* in, float* out, std::size_t totalFloats)
{
    Impl& im = *impl_;
    const std::size_t ch = static_cast<std::size_t>(im.channels);
    if (totalFloats % ch != 0)
        throw std::invalid_argument("GpuIir::process: buffers must hold channels * samples floats");
    processThroughStaging(in, out, totalFloats / ch, ch, im.maxSamples, im.stagingIn, im.stagingOut, im.stream.get(),
                          [this](const float* i, float* o, std::size_t n, std::size_t stride) { processDevice(i, o, n, stride); });
}

void GpuIir::synchronize() { impl_->stream.synchronize(); }
void* GpuIir::stream() const { return impl_->stream.get(); }
int GpuIir::order() const { return impl_->userOrder; }
int GpuIir::channels() const { return impl_->channels; }
const char* GpuIir::variant() const { return impl_->variantName.c_str(); }
void GpuIir::setSchedule(IirSchedule schedule) { impl_->setSchedule(schedule); }
void GpuIir::setTuning(const IirTuning& tuning)
{
    if (tuning.longRunShape < 0 || tuning.longRunShape > 1 || tuning.earlyStores < -1 || tuning.earlyStores > 1)
        throw std::invalid_argument("GpuIir::setTuning: longRunShape must be 0 or 1, earlyStores -1, 0 or 1");
    impl_->tuning = tuning;
}

} // namespace quell::gpu
