// The hand-written kernels against the LibTorch operations they replace.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "model/dropout.h"
#include "model/fast_ops.h"
#include "util/runtime.h"

namespace nope {
namespace {

TEST(FastOps, GeluMatchesLibTorchInValueAndGradient) {
    // Reference: LibTorch's fp32 GELU on the same (dtype-rounded) inputs. In bf16 ours computes in
    // fp32 and rounds once, so it is compared with a bf16 tolerance (LibTorch's own bf16 kernel
    // is further from the fp32 values than ours).
    torch::manual_seed(0);
    const auto x0 = torch::randn({1000}) * 4;  // covers the flat and the steep parts
    const auto g0 = torch::randn({1000});
    for (auto dtype : {torch::kFloat, torch::kBFloat16}) {
        const auto x = x0.to(dtype).clone().requires_grad_();
        const auto ref = x0.to(dtype).to(torch::kFloat).clone().requires_grad_();
        const auto g = g0.to(dtype);
        const auto y = geluTanh(x);
        const auto yr = torch::gelu(ref, "tanh");
        EXPECT_EQ(y.scalar_type(), dtype);
        const double tol = dtype == torch::kFloat ? 1e-5 : 1e-2;
        EXPECT_TRUE(torch::allclose(y.to(torch::kFloat), yr, tol, tol)) << dtype;
        y.backward(g);
        yr.backward(g.to(torch::kFloat));
        EXPECT_TRUE(torch::allclose(x.grad().to(torch::kFloat), ref.grad(), tol, tol)) << dtype;
    }
}

TEST(FastOps, BatchedMatmulMatchesLibTorch) {
    torch::manual_seed(1);
    for (bool transposeB : {false, true}) {
        const auto a = torch::randn({6, 5, 4}, torch::requires_grad());
        const auto b =
            (transposeB ? torch::randn({6, 7, 4}) : torch::randn({6, 4, 7})).requires_grad_();
        const auto y = batchedMatmul(a, b, transposeB);
        const auto yr = torch::matmul(a, transposeB ? b.transpose(1, 2) : b);
        EXPECT_TRUE(torch::allclose(y, yr, 1e-5, 1e-5));
        const auto g = torch::randn({6, 5, 7});
        const auto grads = torch::autograd::grad({y}, {a, b}, {g});
        const auto expected = torch::autograd::grad({yr}, {a, b}, {g});
        EXPECT_TRUE(torch::allclose(grads[0], expected[0], 1e-5, 1e-5)) << transposeB;
        EXPECT_TRUE(torch::allclose(grads[1], expected[1], 1e-5, 1e-5)) << transposeB;
    }
    // non-contiguous inputs, as attention passes them
    const auto base = torch::randn({2, 8, 3, 4});
    const auto q = base.transpose(1, 2).reshape({6, 8, 4});
    EXPECT_TRUE(torch::allclose(batchedMatmul(q, q, true), torch::matmul(q, q.transpose(1, 2)),
                                1e-5, 1e-5));
}

TEST(FastOps, DropoutRateScaleAndGradient) {
    torch::manual_seed(4);
    const auto x = torch::ones({200000}, torch::requires_grad());
    const auto y = nope::dropout(x, 0.2, /*training=*/true);
    const double kept = (y != 0).sum().item<double>() / 200000.0;
    EXPECT_NEAR(kept, 0.8, 0.005);
    EXPECT_TRUE(torch::allclose(y.masked_select(y != 0), torch::full({1}, 1.25f)));
    y.sum().backward();
    EXPECT_TRUE(torch::equal(x.grad(), y.detach()));  // same mask, same scale
    EXPECT_TRUE(torch::equal(nope::dropout(x, 0.2, /*training=*/false), x));
    torch::manual_seed(4);
    EXPECT_TRUE(torch::equal(nope::dropout(x, 0.2, true), y));  // reproducible from the seed
}

TEST(Runtime, DenormalsAreFlushedOnEveryThread) {
    applyThreadCount(2);
    // the largest denormal float, written as bits so that no arithmetic flushes it on the way;
    // large enough for LibTorch to split the multiplications over its threads
    const auto bits = torch::full({1 << 20}, 0x007FFFFF, torch::kInt32);
    const auto x = bits.view(torch::kFloat);
    // without flushing, x stays a denormal and 3x is a normal float: both nonzero
    EXPECT_EQ((x * 1.0f).view(torch::kInt32).count_nonzero().item<int64_t>(), 0);
    EXPECT_EQ((x * 3.0f).view(torch::kInt32).count_nonzero().item<int64_t>(), 0);
}

}  // namespace
}  // namespace nope
