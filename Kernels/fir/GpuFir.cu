// SPDX-License-Identifier: GPL-3.0-or-later
// GpuFir: host side of the direct (FirDirectKernel.cuh) and overlap-save (FirOverlapSaveKernels.cuh) FIR.
#include "fir/GpuFir.h"

#include <cufft.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"
#include "common/HostStaging.cuh"
#include "fir/FirDirectKernel.cuh"
#include "fir/FirHistory.cuh"
#include "fir/FirOverlapSaveKernels.cuh"

namespace quell::gpu {

using namespace fir;

namespace {

void checkCufft(cufftResult r, const char* what)
{
    if (r != CUFFT_SUCCESS)
        throw CudaError(std::string("cuFFT ") + what + " failed with code " + std::to_string(static_cast<int>(r)));
}

class FftPlan {
public:
    FftPlan(int n, int batch, cufftType type, cudaStream_t stream)
    {
        int dims[1] = {n};
        checkCufft(cufftPlanMany(&plan_, 1, dims, nullptr, 1, 0, nullptr, 1, 0, type, batch), "cufftPlanMany");
        checkCufft(cufftSetStream(plan_, stream), "cufftSetStream");
    }
    ~FftPlan() { cufftDestroy(plan_); }
    FftPlan(const FftPlan&) = delete;
    FftPlan& operator=(const FftPlan&) = delete;
    cufftHandle get() const { return plan_; }

private:
    cufftHandle plan_ = 0;
};

std::size_t nextPow2(std::size_t v)
{
    std::size_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

} // namespace

struct GpuFir::Impl {
    FirMethod method = FirMethod::Direct;
    std::size_t tapCount = 0;
    int channels = 0;
    std::size_t maxSamples = 0;
    std::size_t n = 0, step = 0; // FFT size and frame advance
    FirTuning tuning;
    int cur = 0;

    Stream stream;
    DeviceBuffer<float> taps, hist[2], frames, stagingIn, stagingOut;
    DeviceBuffer<cufftComplex> filterSpectrum, spectra;
    std::map<long long, std::pair<std::unique_ptr<FftPlan>, std::unique_ptr<FftPlan>>> plans; // by frame count

    std::size_t histLen() const { return tapCount - 1; }

    std::pair<std::unique_ptr<FftPlan>, std::unique_ptr<FftPlan>>& plansFor(long long batch)
    {
        auto it = plans.find(batch);
        if (it == plans.end()) {
            if (plans.size() >= 16)
                plans.erase(plans.begin());
            auto fwd = std::make_unique<FftPlan>(static_cast<int>(n), static_cast<int>(batch), CUFFT_R2C, stream.get());
            auto inv = std::make_unique<FftPlan>(static_cast<int>(n), static_cast<int>(batch), CUFFT_C2R, stream.get());
            it = plans.emplace(batch, std::make_pair(std::move(fwd), std::move(inv))).first;
        }
        return it->second;
    }

    // Returns whether the kernel also wrote the next history.
    template <int R>
    bool runDirectShape(const float* in, float* out, long long samples, long long stride)
    {
        const dim3 grid(static_cast<unsigned>((samples + kDirectTile - 1) / kDirectTile), static_cast<unsigned>(channels));
        const std::size_t smem = directSharedBytes(static_cast<int>(tapCount), R);
        const bool rows16 = stride % 4 == 0 || channels == 1;
        const bool out16 = reinterpret_cast<std::uintptr_t>(out) % 16 == 0 && rows16;
        const bool in16 = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && rows16 && tuning.vectorWindowLoads;
        const int t = static_cast<int>(tapCount);
        float* next = tuning.fusedHistory && histLen() > 0 ? hist[cur ^ 1].get() : nullptr;
        auto* kernel = in16 ? (out16 ? firDirect<R, true, true> : firDirect<R, false, true>)
                            : (out16 ? firDirect<R, true, false> : firDirect<R, false, false>);
        kernel<<<grid, directThreads<R>(), smem, stream.get()>>>(in, out, stride, samples, taps.get(), t, hist[cur].get(), next);
        QUELL_CUDA_CHECK_LAUNCH();
        return next != nullptr;
    }

    bool runDirect(const float* in, float* out, long long samples, long long stride)
    {
        // Measured on the H100 with 16-byte window loads (2^24 samples): R = 8 wins at 16 taps (265 vs 236
        // G samples/s), R = 16 from 64 taps (64: 205 vs 172, 256: 86 vs 58).
        const int r = tuning.directOutputsPerThread != 0 ? tuning.directOutputsPerThread : (tapCount < 64 ? 8 : 16);
        return r == 8 ? runDirectShape<8>(in, out, samples, stride) : runDirectShape<16>(in, out, samples, stride);
    }

    void runFft(const float* in, float* out, long long samples, long long stride)
    {
        const long long framesPerChannel = (samples + static_cast<long long>(step) - 1) / static_cast<long long>(step);
        const long long batch = framesPerChannel * channels;
        const long long nn = static_cast<long long>(n);
        const long long bins = nn / 2 + 1;
        auto& p = plansFor(batch);
        const cudaStream_t s = stream.get();
        gatherFrames<<<dim3(static_cast<unsigned>((nn + 255) / 256), static_cast<unsigned>(framesPerChannel),
                            static_cast<unsigned>(channels)), 256, 0, s>>>(
            in, stride, samples, hist[cur].get(), static_cast<long long>(histLen()), frames.get(), nn,
            static_cast<long long>(step), framesPerChannel);
        QUELL_CUDA_CHECK_LAUNCH();
        checkCufft(cufftExecR2C(p.first->get(), frames.get(), spectra.get()), "cufftExecR2C");
        const long long total = bins * batch;
        multiplySpectra<<<static_cast<unsigned>(std::min<long long>((total + 255) / 256, 132LL * 32)), 256, 0, s>>>(
            spectra.get(), filterSpectrum.get(), bins, total);
        QUELL_CUDA_CHECK_LAUNCH();
        checkCufft(cufftExecC2R(p.second->get(), spectra.get(), frames.get()), "cufftExecC2R");
        scatterFrames<<<dim3(static_cast<unsigned>((static_cast<long long>(step) + 255) / 256),
                             static_cast<unsigned>(framesPerChannel), static_cast<unsigned>(channels)), 256, 0, s>>>(
            frames.get(), out, stride, samples, nn, static_cast<long long>(step), static_cast<long long>(histLen()),
            framesPerChannel);
        QUELL_CUDA_CHECK_LAUNCH();
    }

    void launchOne(const float* in, float* out, long long samples, long long stride)
    {
        bool historyDone = false;
        if (method == FirMethod::Direct)
            historyDone = runDirect(in, out, samples, stride);
        else
            runFft(in, out, samples, stride);
        if (historyDone) {
            cur ^= 1;
        } else if (histLen() > 0) {
            const long long len = static_cast<long long>(histLen());
            updateHistory<<<dim3(static_cast<unsigned>((len + 255) / 256), static_cast<unsigned>(channels)), 256, 0,
                            stream.get()>>>(in, stride, samples, hist[cur].get(), hist[cur ^ 1].get(), len);
            QUELL_CUDA_CHECK_LAUNCH();
            cur ^= 1;
        }
    }
};

GpuFir::GpuFir() : impl_(std::make_unique<Impl>()) {}
GpuFir::~GpuFir() = default;

void GpuFir::prepare(const float* tapsHost, std::size_t tapCount, int channels, std::size_t maxSamples, FirMethod method,
                     std::size_t fftSize)
{
    if (tapCount == 0)
        throw std::invalid_argument("GpuFir: at least one tap is required");
    if (channels <= 0 || maxSamples == 0)
        throw std::invalid_argument("GpuFir: channels and maxSamples must be positive");
    auto im = std::make_unique<Impl>();
    im->tapCount = tapCount;
    im->channels = channels;
    im->maxSamples = maxSamples;
    im->method = method == FirMethod::Auto ? (tapCount <= kDirectMaxTaps ? FirMethod::Direct : FirMethod::Fft) : method;
    im->taps.allocate(tapCount);
    QUELL_CUDA_CHECK(cudaMemcpy(im->taps.get(), tapsHost, tapCount * sizeof(float), cudaMemcpyHostToDevice));
    const std::size_t hl = std::max<std::size_t>(tapCount - 1, 1);
    for (auto& h : im->hist)
        h.allocate(hl * static_cast<std::size_t>(channels));
    if (im->method == FirMethod::Direct) {
        const std::size_t smem = std::max(directSharedBytes(static_cast<int>(tapCount), 16), directSharedBytes(static_cast<int>(tapCount), 8));
        if (smem > 200 * 1024)
            throw std::invalid_argument("GpuFir: too many taps for the direct method (" + std::to_string(tapCount) + ")");
        const int bytes = static_cast<int>(smem);
        for (const void* k : {reinterpret_cast<const void*>(firDirect<16, true, false>), reinterpret_cast<const void*>(firDirect<16, false, false>),
                              reinterpret_cast<const void*>(firDirect<8, true, false>), reinterpret_cast<const void*>(firDirect<8, false, false>),
                              reinterpret_cast<const void*>(firDirect<16, true, true>), reinterpret_cast<const void*>(firDirect<16, false, true>),
                              reinterpret_cast<const void*>(firDirect<8, true, true>), reinterpret_cast<const void*>(firDirect<8, false, true>)})
            QUELL_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    } else {
        std::size_t n = fftSize != 0 ? fftSize : std::max<std::size_t>(8192, (tapCount >= 16384 ? 8 : 4) * nextPow2(tapCount));
        if (n <= tapCount || (n & (n - 1)) != 0)
            throw std::invalid_argument("GpuFir: the FFT size must be a power of two above the tap count");
        im->n = n;
        im->step = n - tapCount + 1;
        const std::size_t framesMax = (maxSamples + im->step - 1) / im->step * static_cast<std::size_t>(channels);
        im->frames.allocate(framesMax * n);
        im->spectra.allocate(framesMax * (n / 2 + 1));
        // The filter's spectrum, scaled by 1/N (cuFFT's inverse is unnormalised).
        std::vector<float> padded(n, 0.0f);
        for (std::size_t k = 0; k < tapCount; ++k)
            padded[k] = tapsHost[k] / static_cast<float>(n);
        DeviceBuffer<float> tmp(n);
        QUELL_CUDA_CHECK(cudaMemcpy(tmp.get(), padded.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        im->filterSpectrum.allocate(n / 2 + 1);
        FftPlan plan(static_cast<int>(n), 1, CUFFT_R2C, im->stream.get());
        checkCufft(cufftExecR2C(plan.get(), tmp.get(), im->filterSpectrum.get()), "cufftExecR2C (filter)");
        im->stream.synchronize();
    }
    impl_ = std::move(im);
    reset();
}

void GpuFir::reset()
{
    for (auto& h : impl_->hist)
        QUELL_CUDA_CHECK(cudaMemsetAsync(h.get(), 0, h.size() * sizeof(float), impl_->stream.get()));
    impl_->cur = 0;
}

void GpuFir::processDevice(const float* in, float* out, std::size_t samples, std::size_t stride)
{
    Impl& im = *impl_;
    if (im.tapCount == 0)
        throw std::logic_error("GpuFir: prepare() first");
    if (im.channels > 1 && stride < samples)
        throw std::invalid_argument("GpuFir: channel stride shorter than the block");
    for (std::size_t done = 0; done < samples;) {
        const std::size_t len = std::min(samples - done, im.maxSamples);
        im.launchOne(in + done, out + done, static_cast<long long>(len), static_cast<long long>(stride));
        done += len;
    }
}

void GpuFir::process(const float* in, float* out, std::size_t totalFloats)
{
    Impl& im = *impl_;
    const std::size_t ch = static_cast<std::size_t>(im.channels);
    if (totalFloats % ch != 0)
        throw std::invalid_argument("GpuFir::process: buffers must hold channels * samples floats");
    processThroughStaging(in, out, totalFloats / ch, ch, im.maxSamples, im.stagingIn, im.stagingOut, im.stream.get(),
                          [this](const float* i, float* o, std::size_t n, std::size_t stride) { processDevice(i, o, n, stride); });
}

void GpuFir::synchronize() { impl_->stream.synchronize(); }
void* GpuFir::stream() const { return impl_->stream.get(); }
FirMethod GpuFir::method() const { return impl_->method; }
std::size_t GpuFir::fftSize() const { return impl_->n; }
std::size_t GpuFir::taps() const { return impl_->tapCount; }
int GpuFir::channels() const { return impl_->channels; }
void GpuFir::setTuning(const FirTuning& tuning)
{
    const int r = tuning.directOutputsPerThread;
    if (r != 0 && r != 8 && r != 16)
        throw std::invalid_argument("GpuFir::setTuning: outputs per thread must be 0, 8 or 16 (got " + std::to_string(r) + ")");
    impl_->tuning = tuning;
}

} // namespace quell::gpu
