// The Linear's weight gradient (model/gemm.h) against LibTorch's product, on one thread, inside
// the parallel region where the split training step runs it, and on several threads.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <ATen/Parallel.h>

#include <array>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/fast_ops.h"
#include "model/gemm.h"

namespace nope {
namespace {

torch::Tensor weightGradientOf(const torch::Tensor& dy, const torch::Tensor& x) {
    auto dw = torch::empty({dy.size(1), x.size(1)});
    weightGradient(dy.size(0), dy.size(1), x.size(1), dy.data_ptr<float>(), x.data_ptr<float>(),
                   dw.data_ptr<float>());
    return dw;
}

// Shapes of the model's Linears (rows of a share, then out x in), and odd ones.
const std::vector<std::array<int64_t, 3>> kShapes = {
    {640, 96, 32}, {640, 32, 128}, {1000, 33, 7}, {5, 17, 300}, {1, 4, 4}};

TEST(Gemm, WeightGradientMatchesLibTorchOnEveryPath) {
    torch::manual_seed(3);
    const int threads = at::get_num_threads();
    for (const auto& [m, n, k] : kShapes) {
        SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k));
        const auto dy = torch::randn({m, n});
        const auto x = torch::randn({m, k});
        const auto expected = torch::mm(dy.t(), x);
        const double scale = expected.abs().max().item<double>();
        EXPECT_TRUE(torch::allclose(weightGradientOf(dy, x), expected, 1e-5, 1e-5 * scale));
        // inside a parallel region, two shares at once, as the split step runs them
        std::vector<torch::Tensor> shares(2);
        onEachThread(2, [&](int64_t i) { shares[i] = weightGradientOf(dy, x); });
        for (const auto& share : shares) {
            EXPECT_TRUE(torch::allclose(share, expected, 1e-5, 1e-5 * scale));
        }
        auto direct = torch::empty_like(expected);
        ASSERT_TRUE(openBlasWeightGradient(m, n, k, dy.data_ptr<float>(), x.data_ptr<float>(),
                                           direct.data_ptr<float>()));
        EXPECT_TRUE(torch::allclose(direct, expected, 1e-5, 1e-5 * scale));
        at::set_num_threads(1);
        EXPECT_TRUE(torch::allclose(weightGradientOf(dy, x), expected, 1e-5, 1e-5 * scale));
        at::set_num_threads(threads);
    }
}

// The project's set-up (scripts/install-deps.sh) installs libopenblas0-openmp, which makes
// LibTorch's libblas.so.3 OpenBLAS: the weight gradients' fast library. A machine where this fails
// runs them through oneDNN, correct but slower (docs/performance.md).
TEST(Gemm, LibTorchsBlasIsOpenBlas) {
    EXPECT_TRUE(openBlasLoaded()) << weightGradientLibrary();
    EXPECT_EQ(weightGradientsThroughOpenBlas(), openBlasLoaded() && !kernels::cpuHasAvx512())
        << weightGradientLibrary();
}

}  // namespace
}  // namespace nope
