// The Linear's weight gradient (model/gemm.h) against LibTorch's product, on one thread, inside
// the parallel region where the split training step runs it, and on several threads; and the
// products prepared at start-up, with memory gone.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <ATen/Parallel.h>

#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
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

// The address space a process has used so far, from /proc/self/statm (Linux).
rlim_t addressSpaceInUse() {
    std::ifstream statm("/proc/self/statm");
    rlim_t pages = 0;
    statm >> pages;
    return pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
}

// After prepareSgemm, products of every transposition and of the shapes the model and the
// analysis use need no new code from oneDNN: with the address space capped at what is in use,
// each one succeeds or reports its memory (std::bad_alloc), and none crashes. Without the
// preparation oneDNN 2.6 crashed here (the 2 x 1 product, code generated inside a pthread_once
// whose allocation failed; a segfault on the Zen 4, also with 10 MB of room left), as it had in
// a training run that ran out of memory during its first analysis.
TEST(Gemm, PreparedProductsNeedNoNewCodeWhenMemoryIsGone) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: nothing generated yet
    const auto products = []() {
        prepareSgemm();
        constexpr int64_t n = 64;
        std::vector<float> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n);
        const rlimit cap{addressSpaceInUse(), RLIM_INFINITY};
        setrlimit(RLIMIT_AS, &cap);
        int failed = 0;
        for (const auto& [m, p, k] : std::vector<std::array<int64_t, 3>>{{64, 64, 64},
                                                                         {2, 2, 2},
                                                                         {2, 1, 2},
                                                                         {1, 2, 2},
                                                                         {3, 3, 64},
                                                                         {40, 40, 64},
                                                                         {1, 1, 1}}) {
            for (const char transA : {'N', 'T'}) {
                for (const char transB : {'N', 'T'}) {
                    try {
                        sgemm(transA, transB, m, p, k, a.data(), transA == 'N' ? k : m, b.data(),
                              transB == 'N' ? p : k, c.data());
                    } catch (const std::bad_alloc&) {
                        ++failed;
                    }
                }
            }
        }
        std::fprintf(stderr, "%d of 28 products reported out of memory\n", failed);
        std::exit(0);
    };
    EXPECT_EXIT(products(), ::testing::ExitedWithCode(0), "of 28 products");
}

}  // namespace
}  // namespace nope
