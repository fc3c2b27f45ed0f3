#include "model/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <mutex>

#include "kernels/kernels.h"
#include "util/profile_scope.h"

namespace nope {

namespace {

inline uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

struct Stream {
    bool active = false;
    uint64_t seed = 0;
    uint64_t calls = 0;
};
thread_local Stream t_stream;

uint64_t nextSeed() {
    if (t_stream.active) {
        return mix(t_stream.seed ^ mix(++t_stream.calls));
    }
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    return gen.get<at::CPUGeneratorImpl>()->random64();
}

// mask[i] = scale when kept, 0 when dropped; two decisions per 64-bit hash. On CPUs with AVX2 the
// vectorized loop of kernels/dropout_body.inc (the same bits), written in bf16 directly for a bf16
// mask (scale rounded as a cast would round it).
torch::Tensor makeMask(int64_t n, double p, uint64_t seed, torch::ScalarType dtype) {
    static const bool vectorized = kernels::cpuHasAvx2Fma();
    if (vectorized && (dtype == torch::kFloat || dtype == torch::kBFloat16)) {
        const int64_t pairs = (n + 1) / 2;
        const uint32_t threshold = static_cast<uint32_t>(p * 4294967296.0);
        const float scale = static_cast<float>(1.0 / (1.0 - p));
        const kernels::Kernels& k = kernels::selected();
        auto mask = torch::empty({2 * pairs}, torch::TensorOptions().dtype(dtype));
        if (dtype == torch::kFloat) {
            float* m = mask.data_ptr<float>();
            at::parallel_for(0, pairs, 4096, [&](int64_t begin, int64_t end) {
                k.dropoutMask(seed, threshold, scale, begin, end - begin, m + 2 * begin);
            });
        } else {
            auto* m = reinterpret_cast<uint16_t*>(mask.data_ptr<at::BFloat16>());
            const uint16_t bits = c10::BFloat16(scale).x;
            at::parallel_for(0, pairs, 4096, [&](int64_t begin, int64_t end) {
                k.dropoutMaskBf16(seed, threshold, bits, begin, end - begin, m + 2 * begin);
            });
        }
        return mask.slice(0, 0, n);
    }
    auto mask = torch::empty({n}, torch::kFloat);
    float* m = mask.data_ptr<float>();
    const uint32_t threshold = static_cast<uint32_t>(p * 4294967296.0);
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    at::parallel_for(0, (n + 1) / 2, 4096, [&](int64_t begin, int64_t end) {
        for (int64_t pair = begin; pair < end; ++pair) {
            const uint64_t h = mix(seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(pair + 1));
            const int64_t i = 2 * pair;
            m[i] = static_cast<uint32_t>(h) < threshold ? 0.0f : scale;
            if (i + 1 < n) {
                m[i + 1] = static_cast<uint32_t>(h >> 32) < threshold ? 0.0f : scale;
            }
        }
    });
    return dtype == torch::kFloat ? mask : mask.to(dtype);
}

struct MaskedScale : torch::autograd::Function<MaskedScale> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 double p) {
        NOPE_PROFILE_SCOPE("nope::dropout");
        const auto contiguous = x.contiguous();
        const auto mask =
            makeMask(contiguous.numel(), p, nextSeed(), x.scalar_type()).view(contiguous.sizes());
        ctx->save_for_backward({mask});
        return contiguous * mask;
    }
    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads) {
        NOPE_PROFILE_SCOPE("nope::dropout_backward");
        const auto mask = ctx->get_saved_variables()[0];
        return {grads[0] * mask, torch::Tensor()};
    }
};

}  // namespace

DropoutStream::DropoutStream(uint64_t seed) {
    t_stream = {true, seed, 0};
}
DropoutStream::~DropoutStream() {
    t_stream = {};
}

torch::Tensor dropoutMask(int64_t n, double p) {
    return makeMask(n, p, nextSeed(), torch::kFloat);
}

torch::Tensor dropout(const torch::Tensor& x, double p, bool training) {
    if (!training || p <= 0.0) {
        return x;
    }
    if (!x.device().is_cpu()) {
        return torch::dropout(x, p, training);
    }
    return MaskedScale::apply(x, p);
}

}  // namespace nope
