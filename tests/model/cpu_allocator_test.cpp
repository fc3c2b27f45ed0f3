// The caching CPU allocator (util/cpu_allocator.h): large freed blocks come back for the next
// tensor of their size class, small ones go to malloc, LibTorch's and oneDNN's raw allocations
// work through it, and releasing the cache empties it.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <c10/core/CPUAllocator.h>

#include <cstdint>

#include "model/fast_ops.h"
#include "util/cpu_allocator.h"

namespace nope {
namespace {

class CpuAllocator : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cachingCpuAllocatorBuilt()) {
            GTEST_SKIP() << "an AddressSanitizer build keeps LibTorch's own allocator";
        }
        if (cachedCpuBytesLimit() == 0) {
            GTEST_SKIP() << "a memory limit on this process: the cache stays empty";
        }
        installCachingCpuAllocator();
        releaseCachedCpuMemory();
    }
    void TearDown() override { releaseCachedCpuMemory(); }
};

TEST_F(CpuAllocator, ReusesALargeBlockForTheNextTensorOfItsSizeClass) {
    const int64_t floats = 3 * 1024 * 1024 / 4;  // 3 MiB
    const void* first = nullptr;
    {
        const auto t = torch::ones({floats});
        first = t.data_ptr();
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % 64, 0u);
        EXPECT_EQ(cachedCpuBytes(), 0u);
    }
    EXPECT_GE(cachedCpuBytes(), std::size_t(floats) * 4);
    {
        const auto same = torch::zeros({floats});  // the same block, written afresh
        EXPECT_EQ(same.data_ptr(), first);
        EXPECT_EQ(same.sum().item<float>(), 0.0f);
        EXPECT_EQ(cachedCpuBytes(), 0u);
    }
    {
        const auto near = torch::empty({floats - 1000});  // 12.5% steps: the same class
        EXPECT_EQ(near.data_ptr(), first);
        const auto other = torch::empty({floats * 2});  // a class of its own: a new block
        EXPECT_NE(other.data_ptr(), first);
    }
    releaseCachedCpuMemory();
    EXPECT_EQ(cachedCpuBytes(), 0u);
}

TEST_F(CpuAllocator, SmallBlocksGoBackToMalloc) {
    { const auto t = torch::ones({1000}); }
    EXPECT_EQ(cachedCpuBytes(), 0u);
    EXPECT_LE(cachedCpuBytesLimit(), std::size_t(8) << 30);
    EXPECT_GT(cachedCpuBytesLimit(), kCachedBlockMinBytes);
}

TEST_F(CpuAllocator, RawAllocationsAndComputationsGoThroughIt) {
    c10::Allocator* allocator = c10::GetCPUAllocator();
    ASSERT_NE(allocator->raw_deleter(), nullptr);  // oneDNN's scratch buffers come from here
    void* raw = allocator->raw_allocate(2 << 20);
    ASSERT_NE(raw, nullptr);
    static_cast<char*>(raw)[(2 << 20) - 1] = 1;
    allocator->raw_deallocate(raw);
    EXPECT_GE(cachedCpuBytes(), std::size_t(2) << 20);
    EXPECT_EQ(allocator->allocate(0).get(), nullptr);
    // products and their gradients in both precisions, on blocks reused from the cache
    torch::manual_seed(0);
    for (int round = 0; round < 2; ++round) {
        const auto a = torch::randn({512, 768}), b = torch::randn({768, 640});
        const auto ref = torch::matmul(a.to(torch::kDouble), b.to(torch::kDouble));
        EXPECT_TRUE(torch::allclose(torch::matmul(a, b).to(torch::kDouble), ref, 1e-3, 1e-3));
        const auto bf = torch::matmul(a.to(torch::kBFloat16), b.to(torch::kBFloat16));
        // where the CPU has no bf16 instructions LibTorch's bf16 product sums in bf16 (errors
        // near 8% of the largest value on a Zen 3): close to that, not what a reused block held
        const double scale = ref.abs().max().item<double>();
        EXPECT_TRUE(torch::allclose(bf.to(torch::kDouble), ref, 0.1,
                                    emulatingBf16Products() ? 0.15 * scale : 0.5));
    }
}

}  // namespace
}  // namespace nope
