// nope::residualAddLayerNorm against the two calls it fuses (residualAdd, then layerNorm).
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <string>
#include <tuple>

#include "model/fast_ops.h"
#include "util/autocast_scope.h"
#include "util/runtime.h"

namespace nope {
namespace {

struct Grads {
    torch::Tensor sum, normed, x, branch, weight, bias;
    std::string node;  // the autograd node that made the sum
};

// Runs the fused call or the two calls on copies of the inputs, under bf16 autocast or not, and
// back-propagates a loss that reads both outputs (the stream goes on to the next block as well).
Grads run(bool fused, bool autocast, const torch::Tensor& x0, const torch::Tensor& branch0,
          const torch::Tensor& w0, const torch::Tensor& b0) {
    const auto x = x0.clone().requires_grad_(), branch = branch0.clone().requires_grad_();
    const auto w = w0.clone().requires_grad_();
    const auto b = b0.defined() ? b0.clone().requires_grad_() : torch::Tensor();
    torch::Tensor sum, normed;
    {
        AutocastScope scope(autocast);
        if (fused) {
            std::tie(sum, normed) = residualAddLayerNorm(x, branch, w, b, 1e-5);
        } else {
            sum = residualAdd(x, branch);
            normed = layerNorm(sum, w, b, 1e-5);
        }
    }
    const std::string node = sum.grad_fn() ? sum.grad_fn()->name() : "";
    const auto gSum = torch::sin(torch::arange(sum.numel(), torch::kFloat)).view(sum.sizes());
    const auto gNormed = torch::cos(torch::arange(sum.numel(), torch::kFloat)).view(sum.sizes());
    ((sum * gSum).sum() + (normed.to(torch::kFloat) * gNormed).sum()).backward();
    return {sum.detach(),  normed.detach(), x.grad(),
            branch.grad(), w.grad(),        b.defined() ? b.grad() : torch::Tensor(),
            node};
}

void expectSame(const Grads& a, const Grads& b, const std::string& what) {
    EXPECT_TRUE(torch::equal(a.sum, b.sum)) << what;
    ASSERT_EQ(a.normed.scalar_type(), b.normed.scalar_type()) << what;
    EXPECT_TRUE(torch::equal(a.normed, b.normed)) << what;
    EXPECT_TRUE(torch::equal(a.x, b.x)) << what;
    ASSERT_EQ(a.branch.scalar_type(), b.branch.scalar_type()) << what;
    EXPECT_TRUE(torch::equal(a.branch, b.branch)) << what;
    EXPECT_TRUE(torch::equal(a.weight, b.weight)) << what;
    EXPECT_EQ(a.bias.defined(), b.bias.defined()) << what;
    if (a.bias.defined() && b.bias.defined()) {
        EXPECT_TRUE(torch::equal(a.bias, b.bias)) << what;
    }
}

// Under bf16 autocast: the sum, the bf16 LayerNorm and all four gradients bit for bit, on rows of
// 256 (blocks of 16 rows, 111 rows leaving a remainder) and of 40 (a remainder after the lanes),
// with and without a bias.
TEST(ResidualAddLayerNorm, UnderBf16AutocastIsTheTwoCallsBitForBit) {
    torch::manual_seed(3);
    for (const int64_t n : {256, 40}) {
        const auto x0 = torch::randn({3, 37, n}) * 2 + 0.25;
        const auto branch0 = torch::randn({3, 37, n}).to(torch::kBFloat16);
        const auto w0 = torch::randn({n}), b0 = torch::randn({n});
        for (const bool withBias : {true, false}) {
            const auto b = withBias ? b0 : torch::Tensor();
            const Grads fused = run(true, true, x0, branch0, w0, b);
            const Grads plain = run(false, true, x0, branch0, w0, b);
            ASSERT_EQ(fused.normed.scalar_type(), torch::kBFloat16);
            ASSERT_EQ(fused.branch.scalar_type(), torch::kBFloat16);
            EXPECT_NE(fused.node.find("ResidualAddLayerNorm"), std::string::npos) << fused.node;
            expectSame(fused, plain,
                       "n " + std::to_string(n) + " bias " + std::to_string(withBias));
        }
    }
}

// Outside autocast (fp32 stream and branch), and under autocast with the fast kernels off, it is
// the two calls.
TEST(ResidualAddLayerNorm, ElsewhereIsTheTwoCalls) {
    torch::manual_seed(4);
    const auto x0 = torch::randn({2, 9, 64}), w0 = torch::randn({64}), b0 = torch::randn({64});
    const auto branch0 = torch::randn({2, 9, 64});
    const Grads fp32 = run(true, false, x0, branch0, w0, b0);
    ASSERT_EQ(fp32.normed.scalar_type(), torch::kFloat);
    expectSame(fp32, run(false, false, x0, branch0, w0, b0), "fp32");
    FastKernelsScope off(false);
    const auto bf16Branch = branch0.to(torch::kBFloat16);
    expectSame(run(true, true, x0, bf16Branch, w0, b0), run(false, true, x0, bf16Branch, w0, b0),
               "fast kernels off");
}

}  // namespace
}  // namespace nope
