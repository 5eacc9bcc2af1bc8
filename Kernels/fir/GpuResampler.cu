// SPDX-License-Identifier: GPL-3.0-or-later
// GpuResampler: host side of ResamplerKernel.cuh; phase bookkeeping mirrors dsp::PolyphaseResampler.
#include "fir/GpuResampler.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/CudaCheck.cuh"
#include "common/DeviceBuffer.cuh"
#include "fir/FirHistory.cuh"
#include "fir/ResamplerKernel.cuh"

namespace quell::gpu {

struct GpuResampler::Impl {
    long long up = 1, down = 1;
    int channels = 0;
    std::size_t maxInput = 0;
    std::size_t tapsPerPhase = 0;
    unsigned long long inputCount = 0, nextT = 0;
    int cur = 0;
    Stream stream;
    DeviceBuffer<float> taps, hist[2], stagingIn, stagingOut;

    long long histLen() const { return static_cast<long long>(tapsPerPhase) - 1; }
};

GpuResampler::GpuResampler() : impl_(std::make_unique<Impl>()) {}
GpuResampler::~GpuResampler() = default;

void GpuResampler::prepare(int inputRate, int outputRate, const double* prototype, std::size_t prototypeLength,
                           int channels, std::size_t maxInput)
{
    if (inputRate <= 0 || outputRate <= 0)
        throw std::invalid_argument("GpuResampler: sample rates must be positive (got " + std::to_string(inputRate)
                                    + " -> " + std::to_string(outputRate) + ")");
    if (channels <= 0 || maxInput == 0)
        throw std::invalid_argument("GpuResampler: channels and maxInput must be positive");
    auto im = std::make_unique<Impl>();
    const int g = std::gcd(inputRate, outputRate);
    im->up = outputRate / g;
    im->down = inputRate / g;
    if (im->up > 4096 || im->down > 4096)
        throw std::invalid_argument("GpuResampler: rate ratio too irregular (L or M above 4096)");
    if (prototype == nullptr || prototypeLength == 0)
        throw std::invalid_argument("GpuResampler: the prototype filter is empty");
    const std::vector<double> h(prototype, prototype + prototypeLength);
    im->tapsPerPhase = (h.size() + static_cast<std::size_t>(im->up) - 1) / static_cast<std::size_t>(im->up);
    std::vector<float> table(static_cast<std::size_t>(im->up) * im->tapsPerPhase, 0.0f);
    for (long long p = 0; p < im->up; ++p)
        for (std::size_t j = 0; j < im->tapsPerPhase; ++j) {
            const std::size_t k = static_cast<std::size_t>(p) + j * static_cast<std::size_t>(im->up);
            if (k < h.size())
                table[static_cast<std::size_t>(p) * im->tapsPerPhase + j] = static_cast<float>(h[k]);
        }
    im->taps.allocate(table.size());
    QUELL_CUDA_CHECK(cudaMemcpy(im->taps.get(), table.data(), table.size() * sizeof(float), cudaMemcpyHostToDevice));
    im->channels = channels;
    im->maxInput = maxInput;
    for (auto& b : im->hist)
        b.allocate(std::max<std::size_t>(1, im->tapsPerPhase - 1) * static_cast<std::size_t>(channels));
    impl_ = std::move(im);
    reset();
}

void GpuResampler::reset()
{
    Impl& im = *impl_;
    for (auto& b : im.hist)
        QUELL_CUDA_CHECK(cudaMemsetAsync(b.get(), 0, b.size() * sizeof(float), im.stream.get()));
    im.cur = 0;
    im.inputCount = 0;
    im.nextT = 0;
}

std::size_t GpuResampler::outputsFor(std::size_t inputCount) const
{
    const Impl& im = *impl_;
    const unsigned long long end = (im.inputCount + inputCount) * static_cast<unsigned long long>(im.up);
    if (end <= im.nextT)
        return 0;
    return static_cast<std::size_t>((end - im.nextT + static_cast<unsigned long long>(im.down) - 1)
                                    / static_cast<unsigned long long>(im.down));
}

std::size_t GpuResampler::maxOutput(std::size_t inputCount) const
{
    const Impl& im = *impl_;
    return static_cast<std::size_t>((static_cast<unsigned long long>(inputCount) * im.up + im.down - 1) / im.down) + 1;
}

std::size_t GpuResampler::processDevice(const float* in, std::size_t inStride, std::size_t samples, float* out,
                                        std::size_t outStride)
{
    Impl& im = *impl_;
    std::size_t written = 0;
    for (std::size_t done = 0; done < samples;) {
        const std::size_t len = std::min(samples - done, im.maxInput);
        const std::size_t count = outputsFor(len);
        if (count > 0) {
            fir::polyphaseResample<<<dim3(static_cast<unsigned>((count + 127) / 128), static_cast<unsigned>(im.channels)), 128, 0,
                                im.stream.get()>>>(in + done, static_cast<long long>(inStride), static_cast<long long>(len),
                                                   im.hist[im.cur].get(), im.histLen(), im.taps.get(),
                                                   static_cast<int>(im.tapsPerPhase), im.up, im.down, im.nextT,
                                                   im.inputCount, out + written, static_cast<long long>(outStride),
                                                   static_cast<long long>(count));
            QUELL_CUDA_CHECK_LAUNCH();
        }
        if (im.histLen() > 0) {
            fir::updateHistory<<<dim3(static_cast<unsigned>((im.histLen() + 127) / 128), static_cast<unsigned>(im.channels)), 128,
                                 0, im.stream.get()>>>(in + done, static_cast<long long>(inStride), static_cast<long long>(len),
                                                       im.hist[im.cur].get(), im.hist[im.cur ^ 1].get(), im.histLen());
            QUELL_CUDA_CHECK_LAUNCH();
            im.cur ^= 1;
        }
        im.nextT += static_cast<unsigned long long>(count) * static_cast<unsigned long long>(im.down);
        im.inputCount += len;
        written += count;
        done += len;
    }
    return written;
}

std::size_t GpuResampler::process(const float* in, std::size_t samples, float* out, std::size_t outStride)
{
    Impl& im = *impl_;
    if (samples == 0)
        return 0;
    const std::size_t ch = static_cast<std::size_t>(im.channels);
    const std::size_t expected = outputsFor(samples);
    if (outStride < expected)
        throw std::invalid_argument("GpuResampler::process: output stride below the outputs due");
    if (im.stagingIn.size() < ch * samples)
        im.stagingIn.allocate(ch * samples);
    if (im.stagingOut.size() < ch * std::max<std::size_t>(expected, 1))
        im.stagingOut.allocate(ch * std::max<std::size_t>(expected, 1));
    const cudaStream_t s = im.stream.get();
    QUELL_CUDA_CHECK(cudaMemcpyAsync(im.stagingIn.get(), in, ch * samples * sizeof(float), cudaMemcpyHostToDevice, s));
    QUELL_CUDA_CHECK(cudaMemsetAsync(im.stagingOut.get(), 0xff, im.stagingOut.size() * sizeof(float), s));
    const std::size_t written = processDevice(im.stagingIn.get(), samples, samples, im.stagingOut.get(), std::max<std::size_t>(expected, 1));
    if (written > 0)
        QUELL_CUDA_CHECK(cudaMemcpy2DAsync(out, outStride * sizeof(float), im.stagingOut.get(),
                                           std::max<std::size_t>(expected, 1) * sizeof(float), written * sizeof(float), ch,
                                           cudaMemcpyDeviceToHost, s));
    QUELL_CUDA_CHECK(cudaStreamSynchronize(s));
    return written;
}

void GpuResampler::synchronize() { impl_->stream.synchronize(); }
void* GpuResampler::stream() const { return impl_->stream.get(); }
int GpuResampler::upFactor() const { return static_cast<int>(impl_->up); }
int GpuResampler::downFactor() const { return static_cast<int>(impl_->down); }
std::size_t GpuResampler::tapsPerPhase() const { return impl_->tapsPerPhase; }

} // namespace quell::gpu
