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
    int64_t firstRow = 0;
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

// The seed of the batch's row `row` within a call's mask.
inline uint64_t rowSeed(uint64_t seed, int64_t row) {
    return mix(seed ^ mix(0xD1B54A32D192ED03ULL + static_cast<uint64_t>(row)));
}

// mask[i] = scale when kept, 0 when dropped, row by row: within a row, two decisions per 64-bit
// hash of the row's seed and the pair's index. On CPUs with AVX2 the vectorized loop of
// kernels/dropout_body.inc (the same bits), written in bf16 directly for a bf16 mask (scale
// rounded as a cast would round it). A row of odd length ends with half a pair, written here.
torch::Tensor makeMask(int64_t rows, int64_t n, double p, uint64_t seed, int64_t firstRow,
                       torch::ScalarType dtype) {
    static const bool vectorized = kernels::cpuHasAvx2Fma();
    rows = std::max<int64_t>(1, rows);
    const int64_t perRow = n / rows;
    TORCH_CHECK(perRow * rows == n, "dropout: ", n, " elements do not fill ", rows, " rows");
    const uint32_t threshold = static_cast<uint32_t>(p * 4294967296.0);
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    const bool bf16 = vectorized && dtype == torch::kBFloat16;
    auto mask = torch::empty({n}, torch::TensorOptions().dtype(bf16 ? dtype : torch::kFloat));
    const int64_t pairs = perRow / 2;  // whole pairs per row
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, pairs));
    const kernels::Kernels& k = kernels::selected();
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const uint64_t s = rowSeed(seed, firstRow + r);
            const int64_t at = r * perRow;
            if (bf16) {
                auto* m = reinterpret_cast<uint16_t*>(mask.data_ptr<at::BFloat16>()) + at;
                const uint16_t bits = c10::BFloat16(scale).x;
                if (pairs > 0) {
                    k.dropoutMaskBf16(s, threshold, bits, 0, pairs, m);
                }
                if (perRow % 2) {
                    const uint64_t h = mix(s + 0x9E3779B97F4A7C15ULL * uint64_t(pairs + 1));
                    m[perRow - 1] = static_cast<uint32_t>(h) < threshold ? 0 : bits;
                }
                continue;
            }
            float* m = mask.data_ptr<float>() + at;
            if (vectorized && pairs > 0) {
                k.dropoutMask(s, threshold, scale, 0, pairs, m);
            } else {
                for (int64_t pair = 0; pair < pairs; ++pair) {
                    const uint64_t h = mix(s + 0x9E3779B97F4A7C15ULL * uint64_t(pair + 1));
                    m[2 * pair] = static_cast<uint32_t>(h) < threshold ? 0.0f : scale;
                    m[2 * pair + 1] = static_cast<uint32_t>(h >> 32) < threshold ? 0.0f : scale;
                }
            }
            if (perRow % 2) {
                const uint64_t h = mix(s + 0x9E3779B97F4A7C15ULL * uint64_t(pairs + 1));
                m[perRow - 1] = static_cast<uint32_t>(h) < threshold ? 0.0f : scale;
            }
        }
    });
    return mask.scalar_type() == dtype ? mask : mask.to(dtype);
}

struct MaskedScale : torch::autograd::Function<MaskedScale> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 double p) {
        NOPE_PROFILE_SCOPE("nope::dropout");
        const auto contiguous = x.contiguous();
        const int64_t rows = contiguous.dim() > 0 ? contiguous.size(0) : 1;
        const auto mask =
            makeMask(rows, contiguous.numel(), p, nextSeed(), t_stream.firstRow, x.scalar_type())
                .view(contiguous.sizes());
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

DropoutStream::DropoutStream(uint64_t seed, int64_t firstRow) {
    t_stream = {true, seed, 0, firstRow};
}
DropoutStream::~DropoutStream() {
    t_stream = {};
}

torch::Tensor dropoutMask(int64_t rows, int64_t n, double p) {
    return makeMask(rows, n, p, nextSeed(), t_stream.firstRow, torch::kFloat);
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
