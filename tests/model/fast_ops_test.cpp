// The hand-written kernels against the LibTorch operations they replace.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "kernels/kernels.h"
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

// The AVX-512 build of the GELU loops computes what the AVX2 build computes, bit for bit (the
// same fp32 operations per element, only more elements at a time), on values from the flat
// tails to the steep middle and on lengths that leave a remainder.
TEST(FastOps, GeluKernelsAgreeAcrossInstructionSets) {
    if (!kernels::cpuHasAvx2Fma() || !kernels::cpuHasAvx512()) {
        GTEST_SKIP() << "this CPU lacks AVX-512 (or AVX2): one build only";
    }
    const int64_t n = 1000 + 13;
    const auto x = (torch::rand({n}) - 0.5) * 40;  // -20 to 20
    const auto g = torch::randn({n});
    std::vector<float> a(n), b(n);
    kernels::avx2::geluForward(x.data_ptr<float>(), a.data(), n);
    kernels::avx512::geluForward(x.data_ptr<float>(), b.data(), n);
    EXPECT_EQ(a, b);
    kernels::avx2::geluBackward(x.data_ptr<float>(), g.data_ptr<float>(), a.data(), n);
    kernels::avx512::geluBackward(x.data_ptr<float>(), g.data_ptr<float>(), b.data(), n);
    EXPECT_EQ(a, b);
    const auto xb = x.to(torch::kBFloat16), gb = g.to(torch::kBFloat16);
    const auto* xs = reinterpret_cast<const uint16_t*>(xb.data_ptr<at::BFloat16>());
    const auto* gs = reinterpret_cast<const uint16_t*>(gb.data_ptr<at::BFloat16>());
    std::vector<uint16_t> c(n), d(n);
    kernels::avx2::geluForwardBf16(xs, c.data(), n);
    kernels::avx512::geluForwardBf16(xs, d.data(), n);
    EXPECT_EQ(c, d);
    kernels::avx2::geluBackwardBf16(xs, gs, c.data(), n);
    kernels::avx512::geluBackwardBf16(xs, gs, d.data(), n);
    EXPECT_EQ(c, d);
    EXPECT_EQ(kernels::selected().geluForward, &kernels::avx512::geluForward);
    // the dropout mask: the same bits, in fp32 and bf16, from any first pair
    const uint32_t threshold = static_cast<uint32_t>(0.3 * 4294967296.0);
    std::vector<float> m2(2 * 517), m5(2 * 517);
    kernels::avx2::dropoutMask(99, threshold, 1.5f, 1234, 517, m2.data());
    kernels::avx512::dropoutMask(99, threshold, 1.5f, 1234, 517, m5.data());
    EXPECT_EQ(m2, m5);
    std::vector<uint16_t> b2(2 * 517), b5(2 * 517);
    kernels::avx2::dropoutMaskBf16(99, threshold, 0x3FC0, 1234, 517, b2.data());
    kernels::avx512::dropoutMaskBf16(99, threshold, 0x3FC0, 1234, 517, b5.data());
    EXPECT_EQ(b2, b5);
    for (size_t i = 0; i < m2.size(); ++i) {
        EXPECT_EQ(b2[i] == 0x3FC0, m2[i] == 1.5f) << i;  // 0x3FC0 is 1.5 in bf16
    }
}

// The vectorized dropout mask against the hash written out by hand: pair k's 64-bit hash of
// seed + golden * (k + 1) decides elements 2k (low 32 bits) and 2k + 1 (high 32 bits).
TEST(FastOps, DropoutMaskIsTheHashByHand) {
    if (!kernels::cpuHasAvx2Fma()) {
        GTEST_SKIP() << "this CPU lacks AVX2: the plain loop only";
    }
    auto mix = [](uint64_t z) {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    };
    const uint64_t seed = 0x1234567;
    const uint32_t threshold = static_cast<uint32_t>(0.2 * 4294967296.0);
    std::vector<float> mask(2 * 300);
    kernels::selected().dropoutMask(seed, threshold, 1.25f, 40, 300, mask.data());
    int dropped = 0;
    for (int64_t k = 0; k < 300; ++k) {
        const uint64_t h = mix(seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(40 + k + 1));
        EXPECT_EQ(mask[2 * k], static_cast<uint32_t>(h) < threshold ? 0.0f : 1.25f);
        EXPECT_EQ(mask[2 * k + 1], static_cast<uint32_t>(h >> 32) < threshold ? 0.0f : 1.25f);
        dropped += (mask[2 * k] == 0.0f) + (mask[2 * k + 1] == 0.0f);
    }
    EXPECT_NEAR(dropped / 600.0, 0.2, 0.06);
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
