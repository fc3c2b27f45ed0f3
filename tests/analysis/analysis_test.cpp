// Self-cosine matrices and the analysis of a model on prompts.
#include <gtest/gtest.h>

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "analysis/adjacency.h"
#include "analysis/analyzer.h"
#include "common/model_config.h"
#include "model/init.h"
#include "run/snapshot_io.h"
#include "tasks/batch.h"
#include "util/autocast_scope.h"
#include "util/runtime.h"

namespace nope {
namespace {

Gpt makeModel(ModelConfig c, uint64_t seed = 11) {
    torch::manual_seed(seed);
    Gpt model(c);
    initializeWeights(*model);
    return model;
}

ModelConfig small() {
    ModelConfig c;
    c.nLayer = 2;
    c.nHead = 4;
    c.nEmbd = 128;
    return c;
}

TEST(SelfCosine, MatchesTheDefinition) {
    torch::manual_seed(0);
    const auto h = torch::randn({2, 5, 7});
    const auto c = selfCosine(h);
    ASSERT_EQ(c.sizes(), torch::IntArrayRef({2, 5, 5}));
    for (int b = 0; b < 2; ++b) {
        for (int i = 0; i < 5; ++i) {
            for (int j = 0; j < 5; ++j) {
                const auto xi = h[b][i], xj = h[b][j];
                const double expected = (xi * xj).sum().item<double>() /
                                        (xi.norm().item<double>() * xj.norm().item<double>());
                EXPECT_NEAR(c[b][i][j].item<double>(), expected, 1e-5);
            }
        }
    }
    EXPECT_TRUE(torch::allclose(c, c.transpose(1, 2)));
}

TEST(SelfCosine, ZeroVectorGivesZeroNotNaN) {
    const auto h = torch::zeros({1, 3, 4});
    EXPECT_FALSE(torch::isnan(selfCosine(h)).any().item<bool>());
}

TEST(Analyzer, RowsScoresAndKeptMatrices) {
    Gpt model = makeModel(small());
    model->train();
    const TaskData data = makeTaskData(TaskKind::Reversal, DataConfig{100, 100, 3});
    const PromptSet prompts = makePromptSet(data, 20, 9);
    AnalysisOptions options;
    options.points = CaptureSet(allCapturePoints());
    options.keepPrompts = 3;
    options.batchSize = 7;  // several chunks
    const Analysis a = analyze(*model, prompts.tokens, options, prompts.padded);

    EXPECT_TRUE(model->is_training());  // mode restored
    EXPECT_EQ(a.samples, 20);
    EXPECT_EQ(a.seqLen, 22);
    ASSERT_EQ(a.rows.size(), 1u + 3u * 2u);
    EXPECT_EQ(a.rows[0].point, CapturePoint::Embedding);
    EXPECT_EQ(a.rows[0].layer, 0);
    EXPECT_EQ(a.layerCount(), 2);
    ASSERT_EQ(a.keptPrompts.size(), 3u);
    EXPECT_EQ(a.keptPrompts[1], prompts.padded[1]);

    // Recompute the attn layer-1 row by hand from captured states.
    torch::NoGradGuard noGrad;
    model->eval();
    HiddenStates states;
    states.wanted = CaptureSet{CapturePoint::Attn};
    model->forward(prompts.tokens, &states, Head::None);
    const auto cos = selfCosine(states.attn[0]).contiguous();
    std::vector<double> perPrompt;
    for (int b = 0; b < 20; ++b) {
        perPrompt.push_back(adjacencyScore(cos[b].data_ptr<float>(), 22));
    }
    const MeanStd expected = meanStd(perPrompt);
    const LayerScores* row = a.find(CapturePoint::Attn, 1);
    ASSERT_NE(row, nullptr);
    EXPECT_NEAR(row->adjacencyMean, expected.mean, 1e-9);
    EXPECT_NEAR(row->adjacencyStd, expected.std, 1e-9);
    const auto mean = cos.mean(0);
    ASSERT_EQ(row->meanMatrix.size(), 22u * 22u);
    EXPECT_NEAR(row->meanMatrix[5 * 22 + 3], mean[5][3].item<float>(), 1e-5);
    EXPECT_NEAR(row->meanMatrix[7 * 22 + 7], 1.0f, 1e-5);
    ASSERT_EQ(row->promptMatrices.size(), 3u);
    EXPECT_NEAR(row->promptMatrices[2][4 * 22 + 1], cos[2][4][1].item<float>(), 1e-6);
}

TEST(Analyzer, AdjacencyPatternAtDefaultInitAndItsAbsence) {
    // The paper's finding at small scale: with causal attention the first attention layer's
    // output is far more ordered than the embedding; bidirectional attention has no such order.
    const TaskData data = makeTaskData(TaskKind::Reversal, DataConfig{200, 200, 3});
    const PromptSet prompts = makePromptSet(data, 64, 9);
    Gpt causal = makeModel(small());
    const Analysis a = analyze(*causal, prompts.tokens, AnalysisOptions{});
    const double embedding = a.find(CapturePoint::Embedding, 0)->adjacencyMean;
    const double layer1 = a.find(CapturePoint::Attn, 1)->adjacencyMean;
    EXPECT_LT(embedding, 0.6);
    EXPECT_GT(layer1, 0.85);

    ModelConfig bi = small();
    bi.attention = AttentionKind::Bidirectional;
    Gpt bidirectional = makeModel(bi);
    const Analysis b = analyze(*bidirectional, prompts.tokens, AnalysisOptions{});
    EXPECT_LT(b.find(CapturePoint::Attn, 1)->adjacencyMean, 0.6);
}

// A cosine does not depend on scale: states too large for float32's squares give the same
// matrices as small ones (not zeros).
TEST(SelfCosine, HugeStatesGiveTheSameMatrix) {
    torch::manual_seed(2);
    const auto h = torch::randn({2, 6, 64});
    EXPECT_TRUE(torch::allclose(selfCosine(h * 1e30), selfCosine(h), 1e-5, 1e-5));
    EXPECT_TRUE(torch::equal(selfCosine(h * 1e3), selfCosine(h * 1e3)));
}

// The cosines come from the Gram product where float32 allows it and from unit vectors where it
// does not (norms beyond 1e15 or below 1e-15): the two agree, at every scale in between too.
TEST(SelfCosine, GramAndUnitVectorPathsAgree) {
    torch::manual_seed(3);
    const auto h = torch::randn({3, 9, 48});
    const auto reference = selfCosine(h * 1e16);  // unit vectors
    for (double scale : {1e-14, 1e-6, 1.0, 1e6, 1e14}) {
        EXPECT_TRUE(torch::allclose(selfCosine(h * scale), reference, 1e-5, 1e-6)) << scale;
    }
    auto mixed = h.clone();
    mixed[1] *= 1e-20;  // one sequence too small for float32's squares: all by unit vectors
    EXPECT_TRUE(torch::allclose(selfCosine(mixed)[0], reference[0], 1e-5, 1e-6));
    const auto diagonal = selfCosine(h).diagonal(0, 1, 2);
    EXPECT_TRUE(torch::allclose(diagonal, torch::ones_like(diagonal), 1e-6, 1e-6));
}

// Weights drawn with std 1e30: the embedding is still scored (its cosines are scale-free), and
// the analysis names where the states stop being finite instead of a silent table of zeros.
TEST(Analyzer, NamesWhereHiddenStatesStopBeingFinite) {
    ModelConfig c = small();
    c.init.scheme = InitScheme::Normal;
    c.init.std = 1e30;
    Gpt huge = makeModel(c);
    const TaskData data = makeTaskData(TaskKind::Reversal, DataConfig{200, 200, 3});
    const PromptSet prompts = makePromptSet(data, 16, 9);
    AnalysisOptions options;
    options.points = CaptureSet(allCapturePoints());
    const Analysis a = analyze(*huge, prompts.tokens, options);
    ASSERT_TRUE(a.nonFinite.has_value());
    EXPECT_EQ(a.nonFinite->layer, 1);
    EXPECT_NE(a.nonFinite->point, CapturePoint::Embedding);
    EXPECT_NE(a.nonFiniteMessage().find(" layer 1 on"), std::string::npos) << a.nonFiniteMessage();
    ModelConfig normal = small();
    normal.init.scheme = InitScheme::Normal;
    Gpt same = makeModel(normal);  // the same draw at std 0.02
    const Analysis b = analyze(*same, prompts.tokens, options);
    EXPECT_FALSE(b.nonFinite.has_value());
    EXPECT_TRUE(b.nonFiniteMessage().empty());
    EXPECT_NEAR(a.find(CapturePoint::Embedding, 0)->adjacencyMean,
                b.find(CapturePoint::Embedding, 0)->adjacencyMean, 5e-3);  // ties round apart

    // the snapshot files keep it
    const Analysis back = analysisFromJson(toJson(a));
    ASSERT_TRUE(back.nonFinite.has_value());
    EXPECT_EQ(back.nonFinite->point, a.nonFinite->point);
    EXPECT_EQ(back.nonFinite->nan, a.nonFinite->nan);
}

// The same analysis on one thread and on two, which split each batch's prompts and the
// projected sites between them.
Analysis analyzeOnThreads(int threads, GptImpl& model, const PromptSet& prompts,
                          const AnalysisOptions& options) {
    const int before = at::get_num_threads();
    applyThreadCount(threads);
    Analysis a = analyze(model, prompts.tokens, options, prompts.padded);
    applyThreadCount(before);
    return a;
}

void expectNear(const std::vector<float>& a, const std::vector<float>& b, double tolerance) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_NEAR(a[i], b[i], tolerance) << i;
    }
}

TEST(Analyzer, TwoThreadsGiveWhatOneGives) {
    Gpt model = makeModel(small());
    const TaskData data = makeTaskData(TaskKind::Reversal, DataConfig{100, 100, 3});
    const PromptSet prompts = makePromptSet(data, 21, 9);
    AnalysisOptions options;
    options.points = CaptureSet(allCapturePoints());
    options.attention = true;
    options.keepPrompts = 10;  // kept from both threads' shares of the first batch
    options.projections = {ProjectionMethod::Pca, ProjectionMethod::Mds};
    options.projectionPrompts = 12;  // and projected from both
    options.batchSize = 15;          // batches of 15 and 6 prompts
    const Analysis one = analyzeOnThreads(1, *model, prompts, options);
    const Analysis two = analyzeOnThreads(2, *model, prompts, options);

    EXPECT_EQ(two.samples, 21);
    EXPECT_EQ(two.keptPrompts, one.keptPrompts);
    ASSERT_EQ(two.rows.size(), one.rows.size());
    for (size_t r = 0; r < one.rows.size(); ++r) {
        const LayerScores &a = one.rows[r], &b = two.rows[r];
        EXPECT_NEAR(b.adjacencyMean, a.adjacencyMean, 1e-6) << r;
        EXPECT_NEAR(b.adjacencyStd, a.adjacencyStd, 1e-6) << r;
        EXPECT_NEAR(b.normScore, a.normScore, 1e-6) << r;
        EXPECT_NEAR(b.varianceScore, a.varianceScore, 1e-6) << r;
        expectNear(b.meanMatrix, a.meanMatrix, 1e-5);
        ASSERT_EQ(b.promptMatrices.size(), 10u);
        for (size_t k = 0; k < b.promptMatrices.size(); ++k) {
            expectNear(b.promptMatrices[k], a.promptMatrices[k], 1e-5);
        }
    }
    ASSERT_EQ(two.attention.heads.size(), one.attention.heads.size());
    for (size_t h = 0; h < one.attention.heads.size(); ++h) {
        const HeadAttention &a = one.attention.heads[h], &b = two.attention.heads[h];
        EXPECT_NEAR(b.entropy, a.entropy, 1e-6);
        EXPECT_NEAR(b.meanDistance, a.meanDistance, 1e-6);
        expectNear(b.meanMatrix, a.meanMatrix, 1e-6);
        ASSERT_EQ(b.promptMatrices.size(), 10u);
        expectNear(b.promptMatrices[9], a.promptMatrices[9], 1e-6);
    }
    ASSERT_EQ(two.projection.items.size(), one.projection.items.size());
    EXPECT_EQ(two.projection.prompts, 12);
    for (size_t i = 0; i < one.projection.items.size(); ++i) {
        const Projection &a = one.projection.items[i], &b = two.projection.items[i];
        EXPECT_EQ(b.point, a.point);
        EXPECT_EQ(b.layer, a.layer);
        EXPECT_EQ(b.method, a.method);
        for (int axis = 0; axis < kProjectionAxes; ++axis) {
            EXPECT_NEAR(b.explained[axis], a.explained[axis], 1e-4) << i;
        }
        EXPECT_NEAR(b.rPosition, a.rPosition, 1e-3) << i;
    }

    // where states stop being finite: the same site whichever thread's prompts show it first
    ModelConfig c = small();
    c.init.scheme = InitScheme::Normal;
    c.init.std = 1e30;
    Gpt huge = makeModel(c);
    const Analysis brokenOne = analyzeOnThreads(1, *huge, prompts, options);
    const Analysis brokenTwo = analyzeOnThreads(2, *huge, prompts, options);
    ASSERT_TRUE(brokenOne.nonFinite.has_value());
    ASSERT_TRUE(brokenTwo.nonFinite.has_value());
    EXPECT_EQ(brokenTwo.nonFinite->point, brokenOne.nonFinite->point);
    EXPECT_EQ(brokenTwo.nonFinite->layer, brokenOne.nonFinite->layer);
    EXPECT_EQ(brokenTwo.nonFinite->nan, brokenOne.nonFinite->nan);
}

TEST(Analyzer, RunsInFp32EvenUnderAutocast) {
    Gpt model = makeModel(small());
    const auto tokens = torch::randint(0, 96, {4, 10}, torch::kLong);
    const Analysis plain = analyze(*model, tokens, AnalysisOptions{});
    at::autocast::set_cpu_enabled(true);
    const Analysis underAutocast = analyze(*model, tokens, AnalysisOptions{});
    EXPECT_TRUE(at::autocast::is_cpu_enabled());  // restored
    at::autocast::set_cpu_enabled(false);
    EXPECT_DOUBLE_EQ(plain.rows[1].adjacencyMean, underAutocast.rows[1].adjacencyMean);
}

// A bf16 analysis (train's --snapshot-precision bf16): the forward passes' products in bf16, the
// scores in fp32, near the fp32 analysis; attn_in captured in fp32 (in bf16 the LayerNorm's
// nearly equal norms round to ties: the 6-layer model's norm scores moved by up to 0.18).
TEST(Analyzer, Bf16ForwardPassesStayNearFp32) {
    ModelConfig c = small();
    c.nLayer = 3;
    Gpt model = makeModel(c);
    model->train();
    const TaskData data = makeTaskData(TaskKind::Addition, DataConfig{100, 100, 3});
    const PromptSet prompts = makePromptSet(data, 32, 9);
    AnalysisOptions options;
    options.points = CaptureSet(allCapturePoints());
    options.attention = true;
    options.keepPrompts = 2;
    options.projections = {ProjectionMethod::Pca, ProjectionMethod::Mds};
    options.projectionPrompts = 8;
    const Analysis fp32 = analyze(*model, prompts.tokens, options, prompts.padded);
    options.bf16 = true;
    const Analysis bf16 = analyze(*model, prompts.tokens, options, prompts.padded);
    EXPECT_TRUE(model->is_training());  // restored
    EXPECT_FALSE(at::autocast::is_cpu_enabled());

    ASSERT_EQ(bf16.rows.size(), fp32.rows.size());
    bool anyDifference = false;  // bf16 did run: some score moved
    for (size_t r = 0; r < fp32.rows.size(); ++r) {
        const LayerScores &a = fp32.rows[r], &b = bf16.rows[r];
        EXPECT_NEAR(b.adjacencyMean, a.adjacencyMean, 0.01) << r;
        EXPECT_NEAR(b.normScore, a.normScore, 0.02) << r;
        EXPECT_NEAR(b.varianceScore, a.varianceScore, 0.02) << r;
        expectNear(b.meanMatrix, a.meanMatrix, 0.02);
        anyDifference = anyDifference || b.meanMatrix != a.meanMatrix;
    }
    EXPECT_TRUE(anyDifference);
    ASSERT_EQ(bf16.attention.heads.size(), fp32.attention.heads.size());
    for (size_t h = 0; h < fp32.attention.heads.size(); ++h) {
        EXPECT_NEAR(bf16.attention.heads[h].entropy, fp32.attention.heads[h].entropy, 0.01);
    }
    ASSERT_EQ(bf16.projection.items.size(), fp32.projection.items.size());
    for (size_t i = 0; i < fp32.projection.items.size(); ++i) {
        EXPECT_NEAR(bf16.projection.items[i].explained[0], fp32.projection.items[i].explained[0],
                    0.02)
            << i;
    }

    // under bf16 autocast the LayerNorm feeds bf16 to the products; its capture stays fp32
    HiddenStates states;
    states.wanted = CaptureSet(allCapturePoints());
    {
        torch::NoGradGuard noGrad;
        AutocastScope autocast(true);
        model->forward(prompts.tokens, &states, Head::None);
    }
    for (const auto& attnIn : states.attnIn) {
        EXPECT_EQ(attnIn.scalar_type(), torch::kFloat);
    }
}

}  // namespace
}  // namespace nope

namespace nope {
namespace {

// Uniform causal weights by hand: row i spreads 1 / (i + 1) over tokens 0..i, so its entropy is
// ln(i + 1) and its mean distance back i / 2.
TEST(Attention, StatisticsOfUniformCausalWeights) {
    const int64_t T = 5;
    const auto allowed = torch::ones({T, T}).tril();
    const auto uniform = (allowed / allowed.sum(-1, true)).expand({2, 1, T, T});
    const auto stats = attentionStatistics(uniform, 3);
    ASSERT_EQ(stats.size(), 1u);
    EXPECT_EQ(stats[0].layer, 3);
    double entropy = 0.0;
    for (int i = 0; i < T; ++i) {
        entropy += std::log(i + 1.0);
    }
    EXPECT_NEAR(stats[0].entropy, entropy / T, 1e-6);
    EXPECT_NEAR(stats[0].meanDistance, (0 + 0.5 + 1 + 1.5 + 2) / 5.0, 1e-6);
    EXPECT_NEAR(stats[0].meanMatrix[3 * T + 1], 0.25, 1e-7);
    // attention to the token itself only: entropy 0, distance 0
    const auto self = torch::eye(T).expand({1, 2, T, T});
    const auto selfStats = attentionStatistics(self, 1);
    ASSERT_EQ(selfStats.size(), 2u);
    EXPECT_NEAR(selfStats[1].entropy, 0.0, 1e-7);
    EXPECT_NEAR(selfStats[1].meanDistance, 0.0, 1e-7);
}

// A model's own weights: each row sums to 1 over earlier tokens and future tokens get none;
// with bidirectional attention they do.
TEST(Attention, ModelWeightsSumToOneOverEarlierTokens) {
    ModelConfig m = test::smallModelConfig(2, 2, 32, 32);
    Gpt model(m);
    initializeWeights(*model);
    const auto tokens = torch::randint(0, 96, {3, 10}, torch::kLong);
    const AttentionAnalysis a = analyzeAttention(*model, tokens, 2);  // two batches
    ASSERT_EQ(a.heads.size(), 4u);
    EXPECT_EQ(a.samples, 3);
    for (const auto& h : a.heads) {
        for (int i = 0; i < 10; ++i) {
            double row = 0.0;
            for (int j = 0; j < 10; ++j) {
                row += h.meanMatrix[i * 10 + j];
                if (j > i) {
                    EXPECT_EQ(h.meanMatrix[i * 10 + j], 0.0f) << "future token " << j;
                }
            }
            EXPECT_NEAR(row, 1.0, 1e-5);
        }
        EXPECT_GT(h.entropy, 0.0);
        EXPECT_LT(h.entropy, std::log(10.0));
    }
    m.attention = AttentionKind::Bidirectional;
    Gpt both(m);
    initializeWeights(*both);
    const AttentionAnalysis b = analyzeAttention(*both, tokens);
    EXPECT_GT(b.heads[0].meanMatrix[0 * 10 + 9], 0.0f);  // the first token sees the last
}

// The snapshot's analysis records the attention in the same passes as the hidden states: the
// same means as analyzeAttention, each kept prompt's own weights, and a JSON round trip.
TEST(Attention, RecordedWithTheHiddenStatesAndKeptPerPrompt) {
    ModelConfig m = test::smallModelConfig(2, 2, 32, 32);
    Gpt model(m);
    initializeWeights(*model);
    const auto tokens = torch::randint(0, 96, {5, 8}, torch::kLong);
    AnalysisOptions options;
    options.attention = true;
    options.keepPrompts = 2;
    options.batchSize = 3;  // two batches: the kept prompts come from the first
    const Analysis a = analyze(*model, tokens, options, {"12345678", "abcdefgh"});
    const AttentionAnalysis alone = analyzeAttention(*model, tokens);
    ASSERT_EQ(a.attention.heads.size(), 4u);
    EXPECT_EQ(a.attention.layerCount(), 2);
    EXPECT_EQ(a.attention.headCount(), 2);
    for (size_t h = 0; h < 4; ++h) {
        const auto& head = a.attention.heads[h];
        EXPECT_NEAR(head.entropy, alone.heads[h].entropy, 1e-6);
        EXPECT_EQ(head.promptMatrices.size(), 2u);
        for (size_t i = 0; i < head.meanMatrix.size(); ++i) {
            EXPECT_NEAR(head.meanMatrix[i], alone.heads[h].meanMatrix[i], 1e-6);
        }
    }
    // prompt 1's own weights: the model's weights on that prompt alone
    HiddenStates states;
    states.attentionWeights = true;
    {
        EvalScope scope(*model);
        model->forward(tokens.slice(0, 1, 2), &states, Head::None);
    }
    const auto* l2h1 = a.attention.find(2, 1);
    ASSERT_NE(l2h1, nullptr);
    const auto own = states.weights[1][0][1].contiguous();
    for (int i = 0; i < 64; ++i) {
        EXPECT_NEAR(l2h1->promptMatrices[1][i], own.data_ptr<float>()[i], 1e-6);
    }
    const Analysis back = analysisFromJson(toJson(a));
    ASSERT_EQ(back.attention.heads.size(), 4u);
    EXPECT_NEAR(back.attention.heads[3].promptMatrices[1][9], l2h1->promptMatrices[1][9], 1e-4);
    EXPECT_DOUBLE_EQ(back.attention.heads[2].meanDistance, a.attention.heads[2].meanDistance);
    Analysis older = a;  // a file written before the attention was recorded
    older.attention = {};
    EXPECT_TRUE(analysisFromJson(toJson(older)).attention.empty());
}

}  // namespace
}  // namespace nope
