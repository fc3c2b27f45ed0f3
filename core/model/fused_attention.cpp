#include "model/fused_attention.h"

#include "kernels/kernels.h"
#include "model/dropout.h"
#include "model/fast_ops.h"
#include "util/enum_names.h"
#include "util/profile_scope.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

namespace nope {

namespace {

constexpr int64_t kLongest = 256;  // sequence length and head size the kernels take

enum class AttentionPath { Fused, Plain };
constexpr EnumName<AttentionPath> kAttentionPaths[] = {{AttentionPath::Fused, "fused"},
                                                       {AttentionPath::Plain, "plain"}};

// NOPESCOPE_ATTENTION=plain keeps LibTorch's operations (to compare the two in one sitting);
// read once.
bool turnedOffByEnvironment() {
    static const bool off = environmentChoice(kAttentionPaths, "NOPESCOPE_ATTENTION",
                                              AttentionPath::Fused) == AttentionPath::Plain;
    return off;
}

struct Shape {
    int64_t batch, t, c, heads, hs;
};

Shape shapeOf(const torch::Tensor& qkv, int64_t nHead) {
    const int64_t c = qkv.size(2) / 3;
    return {qkv.size(0), qkv.size(1), c, nHead, c / nHead};
}

float scaleOf(const Shape& s) {
    return static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.hs)));
}

// One head of one sequence, as the kernels take it: where its rows of q (k and v follow at C and
// 2C) begin in qkv, where its output columns begin in (B, T, C), its weights' and mask's offset.
struct Head {
    int64_t in, out, weights;
    float* work;
};

// f(head) for every (sequence, head), over the threads, each with its work buffer.
template <typename F>
void forEachHead(const Shape& s, F f) {
    at::parallel_for(0, s.batch * s.heads, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> work(kernels::attentionWorkFloats(s.t, s.hs));
        for (int64_t bh = begin; bh < end; ++bh) {
            const int64_t b = bh / s.heads, h = bh % s.heads;
            f(Head{b * s.t * 3 * s.c + h * s.hs, b * s.t * s.c + h * s.hs, bh * s.t * s.t,
                   work.data()});
        }
    });
}

// y (B, T, C) and p (B, nh, T, T) from qkv (contiguous); mask (B, nh, T, T) fp32 or undefined.
template <typename E, typename Kernel>
void runForward(Kernel kernel, const torch::Tensor& qkv, const Shape& s, bool causal,
                const torch::Tensor& mask, torch::Tensor& p, torch::Tensor& y) {
    const E* x = elementsOf<E>(qkv);
    E* yo = elementsOf<E>(y);
    const float* m = mask.defined() ? mask.data_ptr<float>() : nullptr;
    float* pp = p.data_ptr<float>();
    forEachHead(s, [&](const Head& h) {
        const E* q = x + h.in;
        kernel(q, q + s.c, q + 2 * s.c, 3 * s.c, s.t, s.hs, causal, scaleOf(s),
               m != nullptr ? m + h.weights : nullptr, pp + h.weights, yo + h.out, s.c, h.work);
    });
}

void runForward(const torch::Tensor& qkv, const Shape& s, bool causal, const torch::Tensor& mask,
                torch::Tensor& p, torch::Tensor& y) {
    const kernels::Kernels& k = kernels::selected();
    if (qkv.scalar_type() == torch::kBFloat16) {
        runForward<uint16_t>(k.attentionForwardBf16, qkv, s, causal, mask, p, y);
    } else {
        runForward<float>(k.attentionForward, qkv, s, causal, mask, p, y);
    }
}

// gqkv (B, T, 3C) from gy (B, T, C), both contiguous and of qkv's dtype.
template <typename E, typename Kernel>
void runBackward(Kernel kernel, const torch::Tensor& qkv, const Shape& s, bool causal,
                 const torch::Tensor& mask, const torch::Tensor& p, const torch::Tensor& gy,
                 torch::Tensor& gqkv) {
    const E* x = elementsOf<E>(qkv);
    const E* g = elementsOf<E>(gy);
    E* gx = elementsOf<E>(gqkv);
    const float* m = mask.defined() ? mask.data_ptr<float>() : nullptr;
    const float* pp = p.data_ptr<float>();
    forEachHead(s, [&](const Head& h) {
        const E* q = x + h.in;
        E* gq = gx + h.in;
        kernel(q, q + s.c, q + 2 * s.c, 3 * s.c, s.t, s.hs, causal, scaleOf(s),
               m != nullptr ? m + h.weights : nullptr, pp + h.weights, g + h.out, s.c, gq, gq + s.c,
               gq + 2 * s.c, h.work);
    });
}

void runBackward(const torch::Tensor& qkv, const Shape& s, bool causal, const torch::Tensor& mask,
                 const torch::Tensor& p, const torch::Tensor& gy, torch::Tensor& gqkv) {
    const kernels::Kernels& k = kernels::selected();
    if (qkv.scalar_type() == torch::kBFloat16) {
        runBackward<uint16_t>(k.attentionBackwardBf16, qkv, s, causal, mask, p, gy, gqkv);
    } else {
        runBackward<float>(k.attentionBackward, qkv, s, causal, mask, p, gy, gqkv);
    }
}

struct Outputs {
    torch::Tensor y, p;
};

Outputs forwardOf(const torch::Tensor& qkv, const Shape& s, bool causal,
                  const torch::Tensor& mask) {
    Outputs o{torch::empty({s.batch, s.t, s.c}, qkv.options()),
              torch::empty({s.batch, s.heads, s.t, s.t}, qkv.options().dtype(torch::kFloat))};
    runForward(qkv, s, causal, mask, o.p, o.y);
    return o;
}

// A custom function's inputs must be defined: an empty mask stands for none.
struct FusedAttention : torch::autograd::Function<FusedAttention> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& qkv,
                                 int64_t nHead, bool causal, const torch::Tensor& mask) {
        NOPE_PROFILE_SCOPE("nope::attention");
        const auto in = qkv.contiguous();
        const Shape s = shapeOf(in, nHead);
        auto o = forwardOf(in, s, causal, mask.numel() > 0 ? mask : torch::Tensor());
        ctx->save_for_backward({in, o.p, mask});
        ctx->saved_data["heads"] = nHead;
        ctx->saved_data["causal"] = causal;
        return o.y;
    }
    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads) {
        NOPE_PROFILE_SCOPE("nope::attention_backward");
        const auto saved = ctx->get_saved_variables();
        const auto& in = saved[0];
        const Shape s = shapeOf(in, ctx->saved_data["heads"].toInt());
        const auto gy = grads[0].to(in.scalar_type()).contiguous();
        auto gqkv = torch::empty_like(in);
        runBackward(in, s, ctx->saved_data["causal"].toBool(),
                    saved[2].numel() > 0 ? saved[2] : torch::Tensor(), saved[1], gy, gqkv);
        return {gqkv, torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};

}  // namespace

bool fusedAttentionApplies(const torch::Tensor& qkv, int64_t nHead, bool weightsWanted) {
    static const bool kAvx2 = kernels::cpuHasAvx2Fma();
    if (!kAvx2 || !fastKernelsEnabled() || turnedOffByEnvironment() || !qkv.device().is_cpu() ||
        qkv.dim() != 3 ||
        (qkv.scalar_type() != torch::kFloat && qkv.scalar_type() != torch::kBFloat16) ||
        nHead <= 0 || qkv.size(2) % (3 * nHead) != 0) {
        return false;
    }
    const int64_t t = qkv.size(1), hs = qkv.size(2) / (3 * nHead);
    if (t < 1 || t > kLongest || hs < 1 || hs > kLongest) {
        return false;
    }
    return !weightsWanted || !(torch::GradMode::is_enabled() && qkv.requires_grad());
}

torch::Tensor fusedAttention(const torch::Tensor& qkv, int64_t nHead, bool causal, double dropout,
                             torch::Tensor* weights) {
    const Shape s = shapeOf(qkv, nHead);
    const auto mask = dropout > 0.0 ? dropoutMask(s.batch, s.batch * s.heads * s.t * s.t, dropout)
                                          .view({s.batch, s.heads, s.t, s.t})
                                    : torch::empty({0});
    if (weights != nullptr || !(torch::GradMode::is_enabled() && qkv.requires_grad())) {
        NOPE_PROFILE_SCOPE("nope::attention");
        auto o = forwardOf(qkv.contiguous(), s, causal, dropout > 0.0 ? mask : torch::Tensor());
        if (weights != nullptr) {
            *weights = o.p;
        }
        return o.y;
    }
    return FusedAttention::apply(qkv, nHead, causal, mask);
}

}  // namespace nope
