// Attention in one pass (model/fused_attention.h) against the operations it replaces, computed
// here in double from the same inputs: scores, causal mask, softmax, dropout, weighted sum, and
// the gradients of all three projections, in fp32 and bf16, on shapes that fill no register tile
// exactly.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernels.h"
#include "model/dropout.h"
#include "model/fast_ops.h"
#include "model/fused_attention.h"

namespace nope {
namespace {

struct Case {
    int64_t batch, t, heads, hs;
};

// y (B, T, C), the weights (B, nh, T, T) before dropout, in double; mask as the dropout module's
// (B, nh, T, T) or undefined.
std::tuple<torch::Tensor, torch::Tensor> reference(const torch::Tensor& qkv, int64_t heads,
                                                   bool causal, const torch::Tensor& mask) {
    const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3, hs = C / heads;
    auto parts = qkv.split(C, 2);
    auto split = [&](const torch::Tensor& x) { return x.view({B, T, heads, hs}).transpose(1, 2); };
    auto s = torch::matmul(split(parts[0]), split(parts[1]).transpose(-2, -1)) / std::sqrt(hs);
    if (causal) {
        s = s.masked_fill(torch::ones({T, T}, torch::kBool).triu(1),
                          -std::numeric_limits<double>::infinity());
    }
    const auto w = torch::softmax(s, -1);
    const auto dropped = mask.defined() ? w * mask.to(torch::kDouble) : w;
    const auto y = torch::matmul(dropped, split(parts[2])).transpose(1, 2).reshape({B, T, C});
    return {y, w};
}

double largestOff(const torch::Tensor& actual, const torch::Tensor& expected) {
    const auto e = expected.to(torch::kDouble);
    return (actual.to(torch::kDouble) - e).abs().max().item<double>() /
           e.abs().max().item<double>();
}

class FusedAttentionCase
    : public ::testing::TestWithParam<std::tuple<torch::ScalarType, bool, int>> {};

// the last with an odd head size, which bf16 takes without pairs
const Case kCases[] = {{3, 13, 3, 24}, {2, 40, 4, 64}, {1, 1, 2, 8}, {2, 70, 2, 16}, {2, 9, 3, 5}};

TEST_P(FusedAttentionCase, MatchesTheOperationsItReplacesInValueAndGradient) {
    if (!kernels::cpuHasAvx2Fma()) {
        GTEST_SKIP() << "this CPU lacks AVX2 and FMA: attention takes LibTorch's operations";
    }
    const auto [dtype, causal, index] = GetParam();
    const Case c = kCases[index];
    torch::manual_seed(11 + index);
    const auto qkv = (torch::randn({c.batch, c.t, 3 * c.heads * c.hs}) * 1.5).to(dtype);
    ASSERT_TRUE(fusedAttentionApplies(qkv, c.heads, false));
    const auto gy = torch::randn({c.batch, c.t, c.heads * c.hs}).to(dtype);

    const auto input = qkv.clone().requires_grad_(true);
    const auto y = fusedAttention(input, c.heads, causal, 0.0);
    EXPECT_EQ(y.scalar_type(), dtype);
    y.backward(gy);

    const auto exact = qkv.to(torch::kDouble).requires_grad_(true);
    const auto [yRef, wRef] = reference(exact, c.heads, causal, torch::Tensor());
    yRef.backward(gy.to(torch::kDouble));

    // fp32: the kernels' rounding; bf16: the output's and the gradient's rounding to bf16
    const double tol = dtype == torch::kFloat ? 2e-6 : 8e-3;
    EXPECT_LE(largestOff(y, yRef), tol) << "output";
    EXPECT_LE(largestOff(input.grad(), exact.grad()), dtype == torch::kFloat ? 1e-5 : tol)
        << "gradient";

    torch::Tensor weights;
    {
        torch::NoGradGuard noGrad;
        fusedAttention(qkv, c.heads, causal, 0.0, &weights);
    }
    EXPECT_LE(largestOff(weights, wRef), dtype == torch::kFloat ? 2e-6 : 5e-3) << "weights";
    EXPECT_LE((weights.sum(-1) - 1).abs().max().item<double>(), 1e-5);
    if (causal && c.t > 1) {
        EXPECT_EQ(weights.triu(1).abs().max().item<float>(), 0.0f);
    }
}

INSTANTIATE_TEST_SUITE_P(
    DtypeMaskAndShape, FusedAttentionCase,
    ::testing::Combine(::testing::Values(torch::kFloat, torch::kBFloat16), ::testing::Bool(),
                       ::testing::Range(0, 5)),
    [](const ::testing::TestParamInfo<std::tuple<torch::ScalarType, bool, int>>& info) {
        const Case c = kCases[std::get<2>(info.param)];
        return std::string(std::get<0>(info.param) == torch::kFloat ? "Fp32" : "Bf16") +
               (std::get<1>(info.param) ? "Causal" : "Bidirectional") + "B" +
               std::to_string(c.batch) + "T" + std::to_string(c.t) + "H" + std::to_string(c.heads) +
               "x" + std::to_string(c.hs);
    });

// The dropout on the weights drops what the dropout module would drop on the (B, nh, T, T)
// weights with the same seed, and scales the rest the same way; its gradient follows.
TEST(FusedAttention, DropsWhatTheDropoutModuleDrops) {
    if (!kernels::cpuHasAvx2Fma()) {
        GTEST_SKIP() << "this CPU lacks AVX2 and FMA: attention takes LibTorch's operations";
    }
    const int64_t B = 2, T = 21, heads = 3, hs = 16;
    torch::manual_seed(5);
    const auto qkv = torch::randn({B, T, 3 * heads * hs});
    const auto gy = torch::randn({B, T, heads * hs});
    const auto input = qkv.clone().requires_grad_(true);
    torch::Tensor y;
    {
        DropoutStream stream(42);
        y = fusedAttention(input, heads, true, 0.3);
    }
    y.backward(gy);
    torch::Tensor mask;
    {
        DropoutStream stream(42);
        mask = nope::dropout(torch::ones({B, heads, T, T}), 0.3, true);
    }
    const double dropped = (mask == 0).to(torch::kDouble).mean().item<double>();
    EXPECT_GT(dropped, 0.2);
    EXPECT_LT(dropped, 0.4);
    const auto exact = qkv.to(torch::kDouble).requires_grad_(true);
    const auto [yRef, wRef] = reference(exact, heads, true, mask);
    yRef.backward(gy.to(torch::kDouble));
    EXPECT_LE(largestOff(y, yRef), 2e-6);
    EXPECT_LE(largestOff(input.grad(), exact.grad()), 1e-5);
}

// Where it does not apply, the model keeps LibTorch's operations: long sequences, large heads,
// other dtypes, fast kernels off, and weights wanted from a graph that needs gradients.
TEST(FusedAttention, AppliesOnlyWhereItsKernelsDo) {
    if (!kernels::cpuHasAvx2Fma()) {
        EXPECT_FALSE(fusedAttentionApplies(torch::zeros({1, 4, 12}), 2, false));
        return;
    }
    EXPECT_TRUE(fusedAttentionApplies(torch::zeros({1, 256, 12}), 2, false));
    EXPECT_FALSE(fusedAttentionApplies(torch::zeros({1, 257, 12}), 2, false));
    EXPECT_FALSE(fusedAttentionApplies(torch::zeros({1, 4, 3 * 257}), 1, false));
    EXPECT_FALSE(fusedAttentionApplies(torch::zeros({1, 4, 12}, torch::kDouble), 2, false));
    EXPECT_FALSE(fusedAttentionApplies(torch::zeros({1, 4, 12}), 5, false));
    const auto needsGrad = torch::zeros({1, 4, 12}).requires_grad_(true);
    EXPECT_FALSE(fusedAttentionApplies(needsGrad, 2, true));
    EXPECT_TRUE(fusedAttentionApplies(needsGrad, 2, false));
    {
        torch::NoGradGuard noGrad;
        EXPECT_TRUE(fusedAttentionApplies(needsGrad, 2, true));
    }
    FastKernelsScope off(false);
    EXPECT_FALSE(fusedAttentionApplies(torch::zeros({1, 4, 12}), 2, false));
}

// The bf16 kernels of every build give the same bits: AVX2's, AVX-512's, and AVX-512's with the
// BF16 dot product (its pairs added in the same order, each product rounded once), forward and
// backward, with and without the dropout on the weights, heads of even and odd size.
TEST(FusedAttention, Bf16KernelsAgreeToTheBitAcrossInstructionSets) {
    if (!kernels::cpuHasAvx2Fma() || !kernels::cpuHasAvx512()) {
        GTEST_SKIP() << "this CPU lacks AVX-512 (or AVX2): one build only";
    }
    using Forward = decltype(&kernels::avx2::attentionForwardBf16);
    using Backward = decltype(&kernels::avx2::attentionBackwardBf16);
    struct Build {
        const char* name;
        Forward forward;
        Backward backward;
    };
    std::vector<Build> builds = {
        {"avx2", kernels::avx2::attentionForwardBf16, kernels::avx2::attentionBackwardBf16},
        {"avx512", kernels::avx512::attentionForwardBf16, kernels::avx512::attentionBackwardBf16}};
    if (kernels::cpuHasAvx512Bf16()) {
        builds.push_back({"avx512 bf16 dot", kernels::avx512::attentionForwardBf16Dot,
                          kernels::avx512::attentionBackwardBf16Dot});
        EXPECT_EQ(kernels::selected().attentionForwardBf16,
                  &kernels::avx512::attentionForwardBf16Dot);
    }
    torch::manual_seed(11);
    for (const Case c : {Case{1, 37, 1, 64}, Case{1, 21, 1, 7}}) {
        for (const bool dropout : {false, true}) {
            const int64_t t = c.t, hs = c.hs, ld = 3 * hs;
            // scores of a few units, as in a trained model, so that the weights are not all alike
            const auto qkv = (torch::randn({t, ld}) * 1.5).to(torch::kBFloat16);
            const auto gy = torch::randn({t, hs}).to(torch::kBFloat16);
            const auto mask =
                (torch::rand({t, t}) > 0.3).to(torch::kFloat) / 0.7;  // 0 or 1 / (1 - rate)
            const auto* x = reinterpret_cast<const uint16_t*>(qkv.data_ptr<at::BFloat16>());
            const auto* g = reinterpret_cast<const uint16_t*>(gy.data_ptr<at::BFloat16>());
            const float* m = dropout ? mask.data_ptr<float>() : nullptr;
            const float scale = 1.0f / std::sqrt(float(hs));
            std::vector<std::vector<uint16_t>> ys, grads;
            std::vector<std::vector<float>> weights;
            for (const Build& b : builds) {
                std::vector<float> work(kernels::attentionWorkFloats(t, hs)), p(t * t);
                std::vector<uint16_t> y(t * hs), gqkv(t * ld);
                b.forward(x, x + hs, x + 2 * hs, ld, t, hs, true, scale, m, p.data(), y.data(), hs,
                          work.data());
                b.backward(x, x + hs, x + 2 * hs, ld, t, hs, true, scale, m, p.data(), g, hs,
                           gqkv.data(), gqkv.data() + hs, gqkv.data() + 2 * hs, work.data());
                ys.push_back(y);
                grads.push_back(gqkv);
                weights.push_back(p);
            }
            for (size_t i = 1; i < builds.size(); ++i) {
                SCOPED_TRACE(std::string(builds[i].name) + " against avx2, head size " +
                             std::to_string(hs) + (dropout ? ", dropout" : ""));
                EXPECT_EQ(ys[i], ys[0]);
                EXPECT_EQ(weights[i], weights[0]);
                EXPECT_EQ(grads[i], grads[0]);
            }
        }
    }
}

}  // namespace
}  // namespace nope
