// The averaging effect simulated: uniform causal averaging converges to the closed form
// sqrt(k/m) as samples grow, scores 1, and the bidirectional control gives identical rows;
// random softmax weights sit between one token each (low temperature) and uniform (high).
#include <gtest/gtest.h>

#include <cmath>

#include "common/model_config.h"
#include "mechanism/averaging_model.h"
#include "model/init.h"

namespace nope {
namespace {

AveragingConfig uniform(int samples, int dim) {
    AveragingConfig c;
    c.length = 16;
    c.dim = dim;
    c.samples = samples;
    c.seed = 3;
    return c;
}

TEST(Averaging, ClosedFormIsTheSquareRootOfThePositionRatio) {
    const std::vector<float> c = uniformAveragingCosine(4);
    EXPECT_FLOAT_EQ(c[0], 1.0f);
    EXPECT_FLOAT_EQ(c[1 * 4 + 0], std::sqrt(0.5f));  // positions 1 and 2 (1-based)
    EXPECT_FLOAT_EQ(c[3 * 4 + 1], std::sqrt(2.0f / 4.0f));
    EXPECT_FLOAT_EQ(c[0 * 4 + 3], c[3 * 4 + 0]);  // symmetric
}

TEST(Averaging, UniformCausalAveragingConvergesToTheClosedForm) {
    const std::vector<float> closed = uniformAveragingCosine(16);
    const double few =
        largestLowerDifference(simulateAveraging(uniform(4, 1024)).meanMatrix, closed, 16);
    const double many =
        largestLowerDifference(simulateAveraging(uniform(256, 1024)).meanMatrix, closed, 16);
    EXPECT_LT(many, few);   // the error shrinks with the samples
    EXPECT_LT(many, 0.01);  // and is small at 256 samples of 1,024 dimensions
    const AveragingResult r = simulateAveraging(uniform(64, 1024));
    EXPECT_GT(r.adjacencyMean, 0.99);  // every triple counts in expectation: score 1
    EXPECT_EQ(r.length, 16);
}

TEST(Averaging, BidirectionalUniformAveragingGivesIdenticalRows) {
    AveragingConfig c = uniform(8, 32);
    c.causal = false;
    const AveragingResult r = simulateAveraging(c);
    for (float v : r.meanMatrix) {
        EXPECT_NEAR(v, 1.0f, 1e-5);  // every token is the same average
    }
    // All ties, which fail: only rounding in the last bits lets a few triples count.
    EXPECT_LT(r.adjacencyMean, 0.2);
}

TEST(Averaging, RandomWeightsBetweenOneTokenAndUniform) {
    AveragingConfig c = uniform(64, 256);
    c.weights = AveragingWeights::Random;
    c.temperature = 100.0;  // nearly uniform
    const double hot = simulateAveraging(c).adjacencyMean;
    c.temperature = 0.01;  // nearly one token each: little is shared
    const double cold = simulateAveraging(c).adjacencyMean;
    EXPECT_GT(hot, 0.95);
    EXPECT_LT(cold, 0.75);
    EXPECT_GT(cold, 0.3);
}

TEST(Averaging, RefusesBadSettingsNamingTheFlag) {
    AveragingConfig c;
    c.length = 2;
    EXPECT_NE(checkAveraging(c).value_or("").find("--length"), std::string::npos);
    c = {};
    c.temperature = 0.0;
    EXPECT_NE(checkAveraging(c).value_or("").find("--temperature"), std::string::npos);
    c = {};
    c.samples = 100000;
    c.length = 1024;
    c.dim = 1024;
    EXPECT_NE(checkAveraging(c).value_or("").find("too many"), std::string::npos);
    EXPECT_THROW(simulateAveraging(c), std::invalid_argument);
    EXPECT_EQ(parseAveragingWeights("random"), AveragingWeights::Random);
    EXPECT_FALSE(parseAveragingWeights("learned").has_value());
}

// A model's parts in the simulation: its first layer's weights (rows summing to 1 over earlier
// tokens, head n mod heads for prompt n) and its token embeddings of the prompts.
TEST(Averaging, TakesAModelsWeightsAndEmbeddings) {
    Gpt model = seededModel(test::smallModelConfig(1, 2, 32, 16), 2);
    const auto tokens = torch::randint(3, 90, {5, 12}, torch::kLong);
    const ModelMaterial m = modelMaterial(*model, tokens);
    ASSERT_EQ(m.weights.sizes(), (std::vector<int64_t>{5, 12, 12}));
    EXPECT_TRUE(torch::allclose(m.weights.sum(-1), torch::ones({5, 12}), 1e-5, 1e-5));
    EXPECT_EQ(m.weights.triu(1).abs().max().item<double>(), 0.0);  // nothing on future tokens
    EXPECT_TRUE(torch::equal(m.embeddings[3], model->transformer->wte->weight.index_select(
                                                  0, tokens[3])));  // wte of prompt 3
    HiddenStates states;
    states.attentionWeights = true;
    {
        torch::NoGradGuard noGrad;
        model->eval();
        model->forward(tokens, &states, Head::None);
    }
    EXPECT_TRUE(torch::allclose(m.weights[3], states.weights[0][3][1]));  // prompt 3, head 1

    AveragingConfig c;
    c.length = 12;
    c.dim = 32;
    c.samples = 10;
    c.weights = AveragingWeights::Model;
    c.inputs = AveragingInputs::Tokens;
    EXPECT_TRUE(needsModel(c));
    EXPECT_FALSE(closedFormApplies(c));
    EXPECT_THROW(simulateAveraging(c), std::invalid_argument);  // no model given
    const AveragingResult r = simulateAveraging(c, m);
    EXPECT_EQ(r.meanMatrix.size(), 144u);
    EXPECT_GT(r.adjacencyMean, 0.8);  // weights near uniform at init: the averaging effect
    c.length = 11;
    EXPECT_THROW(simulateAveraging(c, m), std::invalid_argument);  // not the prompts' length
    c.length = 12;
    c.dim = 16;
    EXPECT_THROW(simulateAveraging(c, m), std::invalid_argument);  // not the model's width
    EXPECT_EQ(parseAveragingInputs("tokens"), AveragingInputs::Tokens);
    EXPECT_EQ(toString(AveragingWeights::Model), "model");
}

}  // namespace
}  // namespace nope
