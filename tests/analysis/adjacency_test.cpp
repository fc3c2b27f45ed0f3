// The adjacency score and the shrink score on crafted inputs whose answers are known.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "analysis/adjacency.h"

namespace nope {
namespace {

// A T x T matrix with entry f(k, i).
template <typename F>
std::vector<float> matrixOf(int T, F f) {
    std::vector<float> m(static_cast<size_t>(T) * T);
    for (int k = 0; k < T; ++k) {
        for (int i = 0; i < T; ++i) {
            m[static_cast<size_t>(k) * T + i] = f(k, i);
        }
    }
    return m;
}

TEST(Adjacency, TripleTotalIsSumOfKChooseTwo) {
    for (int T = 0; T < 40; ++T) {
        uint64_t sum = 0;
        for (int k = 0; k < T; ++k) {
            sum += static_cast<uint64_t>(k) * (k - 1 < 0 ? 0 : k - 1) / 2;
        }
        EXPECT_EQ(tripleTotal(T), sum) << "T=" << T;
    }
    EXPECT_EQ(tripleTotal(22), 1540u);
}

TEST(Adjacency, PerfectDecayScoresOne) {
    const auto m = matrixOf(20, [](int k, int i) { return 1.0f / (1.0f + std::abs(k - i)); });
    const TripleCount c = countAdjacencyTriples(m.data(), 20);
    EXPECT_EQ(c.hits, c.total);
    EXPECT_DOUBLE_EQ(c.score(), 1.0);
}

TEST(Adjacency, ReversedOrderScoresZero) {
    const auto m = matrixOf(20, [](int k, int i) { return float(std::abs(k - i)); });
    EXPECT_DOUBLE_EQ(adjacencyScore(m.data(), 20), 0.0);
}

TEST(Adjacency, ConstantMatrixScoresZeroBecauseTiesFail) {
    const auto m = matrixOf(16, [](int, int) { return 0.7f; });
    const TripleCount c = countAdjacencyTriples(m.data(), 16);
    EXPECT_EQ(c.hits, 0u);
    EXPECT_EQ(c.total, tripleTotal(16));
}

TEST(Adjacency, HandCountedFourByFour) {
    // Row 2 has the triple (0,1,2): 0.2 < 0.5 counts. Row 3 has (0,1,3): a tie, fails;
    // (0,2,3): 0.3 < 0.1 fails; (1,2,3): 0.3 < 0.1 fails. Upper-triangle entries (9s) and the
    // diagonal must not matter. 1 of 4 triples counts.
    const std::vector<float> m = {
        1.0f, 9.0f, 9.0f, 9.0f,  //
        0.4f, 1.0f, 9.0f, 9.0f,  //
        0.2f, 0.5f, 1.0f, 9.0f,  //
        0.3f, 0.3f, 0.1f, 1.0f,  //
    };
    const TripleCount c = countAdjacencyTriples(m.data(), 4);
    EXPECT_EQ(c.total, 4u);
    EXPECT_EQ(c.hits, 1u);
    EXPECT_DOUBLE_EQ(c.score(), 0.25);
}

TEST(Adjacency, RandomMatrixScoresAboutHalf) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const auto m = matrixOf(96, [&](int, int) { return u(rng); });
    EXPECT_NEAR(adjacencyScore(m.data(), 96), 0.5, 0.01);
}

TEST(Adjacency, ShortSequencesHaveNoTriples) {
    const std::vector<float> m = {1.0f, 0.5f, 0.5f, 1.0f};
    EXPECT_EQ(countAdjacencyTriples(m.data(), 2).total, 0u);
    EXPECT_DOUBLE_EQ(adjacencyScore(m.data(), 2), 0.0);
}

TEST(Shrink, DecreasingScalarScoresOneIncreasingZero) {
    std::vector<float> down, up;
    for (int t = 0; t < 12; ++t) {
        down.push_back(12.0f - t);
        up.push_back(float(t));
    }
    EXPECT_DOUBLE_EQ(shrinkScore(down.data(), 12), 1.0);
    EXPECT_DOUBLE_EQ(shrinkScore(up.data(), 12), 0.0);
    const std::vector<float> flat(12, 3.0f);
    EXPECT_DOUBLE_EQ(shrinkScore(flat.data(), 12), 0.0);
}

TEST(Shrink, EqualsTheAdjacencyCountOnMinusS) {
    // The definition: C[k][i] replaced by -s[i]. Build that matrix and compare counts.
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> u(0, 5);  // small range: plenty of ties
    for (int trial = 0; trial < 20; ++trial) {
        const int T = 3 + trial;
        std::vector<float> s(T);
        for (auto& x : s) {
            x = float(u(rng));
        }
        const auto m = matrixOf(T, [&](int, int i) { return -s[i]; });
        const TripleCount viaMatrix = countAdjacencyTriples(m.data(), T);
        const TripleCount direct = countShrinkTriples(s.data(), T);
        EXPECT_EQ(direct.hits, viaMatrix.hits) << "T=" << T;
        EXPECT_EQ(direct.total, viaMatrix.total);
    }
}

TEST(Stats, MeanAndPopulationStd) {
    const MeanStd s = meanStd({1.0, 2.0, 3.0, 4.0});
    EXPECT_DOUBLE_EQ(s.mean, 2.5);
    EXPECT_DOUBLE_EQ(s.std, std::sqrt(1.25));
    EXPECT_DOUBLE_EQ(meanStd({}).mean, 0.0);
}

}  // namespace
}  // namespace nope
