// GELU on bf16 by table (kernels::geluBf16Tables and the Lookup kernels) against the kernels that
// compute it: the same bits for every one of the 65,536 inputs, forward and backward.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"

namespace nope {
namespace {

struct GeluBuild {
    const char* name;
    decltype(&kernels::avx2::geluForwardBf16) forward;
    decltype(&kernels::avx2::geluBackwardBf16) backward;
    decltype(&kernels::avx2::geluForwardBf16Lookup) forwardLookup;
    decltype(&kernels::avx2::geluBackwardBf16Lookup) backwardLookup;
};

std::vector<GeluBuild> buildsOnThisCpu() {
    std::vector<GeluBuild> builds;
    if (kernels::cpuHasAvx2Fma()) {
        builds.push_back({"avx2", kernels::avx2::geluForwardBf16, kernels::avx2::geluBackwardBf16,
                          kernels::avx2::geluForwardBf16Lookup,
                          kernels::avx2::geluBackwardBf16Lookup});
    }
    if (kernels::cpuHasAvx512()) {
        builds.push_back({"avx512", kernels::avx512::geluForwardBf16,
                          kernels::avx512::geluBackwardBf16, kernels::avx512::geluForwardBf16Lookup,
                          kernels::avx512::geluBackwardBf16Lookup});
    }
    return builds;
}

// The index of the first difference, or -1.
int64_t firstDifference(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i]) {
            return static_cast<int64_t>(i);
        }
    }
    return -1;
}

TEST(GeluLookup, GivesTheKernelsBitsForEveryBf16Input) {
    const std::vector<GeluBuild> builds = buildsOnThisCpu();
    if (builds.empty()) {
        GTEST_SKIP() << "this CPU lacks AVX2: the kernels do not run here";
    }
    const kernels::GeluBf16Tables& tables = kernels::geluBf16Tables();
    // the program's threads flush subnormal floats to zero (util/runtime.h), and so were the
    // tables computed; the kernels compared with them here run the same way
    const kernels::FlushSubnormals flush;
    const int64_t n = 65536;
    std::vector<uint16_t> x(n);
    for (int64_t v = 0; v < n; ++v) {
        x[v] = static_cast<uint16_t>(v);  // every bf16: zeros, subnormals, infinities, NaNs
    }
    // gradients: each bf16 once, paired with the inputs by an odd multiplier (a permutation), and
    // a few alike across all inputs (1, 0, -0, the smallest subnormal, the largest, -infinity)
    std::vector<std::vector<uint16_t>> gradients(1, std::vector<uint16_t>(n));
    for (int64_t v = 0; v < n; ++v) {
        gradients[0][v] = static_cast<uint16_t>((v * 40503) & 0xFFFF);
    }
    for (uint16_t g : {0x3F80, 0x0000, 0x8000, 0x0001, 0x7F7F, 0xFF80}) {
        gradients.emplace_back(n, g);
    }
    for (const GeluBuild& build : builds) {
        std::vector<uint16_t> direct(n), looked(n);
        build.forward(x.data(), direct.data(), n);
        build.forwardLookup(tables.values, x.data(), looked.data(), n);
        const int64_t at = firstDifference(direct, looked);
        EXPECT_EQ(at, -1) << build.name << " forward, input bits " << at;
        for (const std::vector<uint16_t>& g : gradients) {
            build.backward(x.data(), g.data(), direct.data(), n);
            build.backwardLookup(tables.slopes, x.data(), g.data(), looked.data(), n);
            const int64_t wrong = firstDifference(direct, looked);
            EXPECT_EQ(wrong, -1) << build.name << " backward, input bits " << wrong
                                 << ", gradient bits " << (wrong >= 0 ? g[wrong] : 0);
        }
    }
}

}  // namespace
}  // namespace nope
