// The ablations' switches checked by hand on a one-head attention whose projections are known
// (q = 2x, k = x, v = 3x, c_proj the identity): each normalisation's weights, the causal and the
// authors' variants, the replaced projections, v_out; then the drawn inputs, the runner (the
// model's own attention restored, the table's rows) and the settings' checks.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/analyzer.h"
#include "common/model_config.h"
#include "mechanism/ablation_runner.h"
#include "model/init.h"

namespace nope {
namespace {

constexpr int64_t C = 2;

// One head, width 2: q = 2x, k = x, v = 3x, output projection the identity.
CausalSelfAttention knownAttention() {
    ModelConfig config = test::smallModelConfig(1, 1, C, 8);
    config.dropout = 0.0;
    CausalSelfAttention attn(config);
    torch::NoGradGuard noGrad;
    auto eye = torch::eye(C);
    attn->c_attn->weight.copy_(torch::cat({2 * eye, eye, 3 * eye}, 0));
    attn->c_proj->weight.copy_(eye);
    attn->eval();
    return attn;
}

// x (1, 3, 2): three tokens.
torch::Tensor threeTokens() {
    return torch::tensor({1.0f, 0.0f, 0.0f, 1.0f, 1.0f, -2.0f}).view({1, 3, C});
}

struct Out {
    torch::Tensor weights;  // (3, 3)
    torch::Tensor heads;    // (3, 2)
    torch::Tensor y;        // (3, 2)
};

Out run(const AttentionVariant& v, const torch::Tensor& x = threeTokens()) {
    auto attn = knownAttention();
    attn->variant = v;
    torch::NoGradGuard noGrad;
    Out out;
    torch::Tensor heads, weights;
    out.y = attn->forward(x, &heads, nullptr, 0, {}, &weights)[0];
    if (weights.defined()) {  // v_out computes none
        out.weights = weights[0][0];
    }
    out.heads = heads[0];
    return out;
}

// The scaled scores by hand: q_i . k_j / sqrt(hs) with q = 2x, k = x.
double score(int i, int j) {
    auto x = threeTokens()[0];
    return 2.0 * (x[i] * x[j]).sum().item<double>() / std::sqrt(double(C));
}

void expectWeights(const torch::Tensor& w, const std::vector<std::vector<double>>& expected) {
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            EXPECT_NEAR(w[i][j].item<double>(), expected[i][j], 1e-5)
                << "row " << i << " col " << j;
        }
    }
}

AttentionVariant norm(AttentionNorm n, bool asAuthors = false) {
    AttentionVariant v;
    v.norm = n;
    v.asAuthors = asAuthors;
    return v;
}

double sigmoid(double s) {
    return 1.0 / (1.0 + std::exp(-s));
}

TEST(Ablation, TheModelsOwnVariantIsTheDefaultPath) {
    const Out own = run(AttentionVariant{});
    EXPECT_TRUE(norm(AttentionNorm::Softmax).isModelOwn());
    EXPECT_FALSE(norm(AttentionNorm::Uniform).isModelOwn());
    const double s10 = score(1, 0), s11 = score(1, 1);
    const double e0 = std::exp(s10), e1 = std::exp(s11);
    EXPECT_NEAR(own.weights[1][0].item<double>(), e0 / (e0 + e1), 1e-5);
    EXPECT_EQ(own.weights[0][1].item<double>(), 0.0);  // no weight on a future token
}

TEST(Ablation, EachNormalisationWeighsTheScoresAsSpecified) {
    const double s00 = score(0, 0), s10 = score(1, 0), s11 = score(1, 1);
    const double s20 = score(2, 0), s21 = score(2, 1), s22 = score(2, 2);
    expectWeights(run(norm(AttentionNorm::NoDiv)).weights,
                  {{s00, 0, 0}, {s10, s11, 0}, {s20, s21, s22}});
    const double d2 = s20 + s21 + s22;
    expectWeights(
        run(norm(AttentionNorm::DivSum)).weights,
        {{1, 0, 0}, {s10 / (s10 + s11), s11 / (s10 + s11), 0}, {s20 / d2, s21 / d2, s22 / d2}});
    const double a2 = std::abs(s20) + std::abs(s21) + std::abs(s22);
    expectWeights(run(norm(AttentionNorm::Abs)).weights,
                  {{1, 0, 0}, {0, 1, 0}, {std::abs(s20) / a2, std::abs(s21) / a2, s22 / a2}});
    // relu: the negative score s21 weighs nothing
    expectWeights(run(norm(AttentionNorm::Relu)).weights,
                  {{1, 0, 0}, {0, 1, 0}, {s20 / (s20 + s22), 0, s22 / (s20 + s22)}});
    const auto gelu = [](double s) {
        return 0.5 * s * (1 + std::tanh(std::sqrt(2 / M_PI) * (s + 0.044715 * s * s * s)));
    };
    const double g2 = gelu(s20) + gelu(s21) + gelu(s22);
    const auto geluRow = run(norm(AttentionNorm::Gelu)).weights[2];
    EXPECT_NEAR(geluRow[0].item<double>(), gelu(s20) / g2, 1e-5);
    EXPECT_NEAR(geluRow[1].item<double>(), gelu(s21) / g2, 1e-5);  // gelu of a negative score
    EXPECT_NEAR(geluRow[2].item<double>(), gelu(s22) / g2, 1e-5);
    const double q1 = sigmoid(s10) + sigmoid(s11);
    expectWeights(run(norm(AttentionNorm::Sigmoid)).weights,
                  {{1, 0, 0},
                   {sigmoid(s10) / q1, sigmoid(s11) / q1, 0},
                   {sigmoid(s20) / (sigmoid(s20) + sigmoid(s21) + sigmoid(s22)),
                    sigmoid(s21) / (sigmoid(s20) + sigmoid(s21) + sigmoid(s22)),
                    sigmoid(s22) / (sigmoid(s20) + sigmoid(s21) + sigmoid(s22))}});
    expectWeights(run(norm(AttentionNorm::Uniform)).weights,
                  {{1, 0, 0}, {0.5, 0.5, 0}, {1.0 / 3, 1.0 / 3, 1.0 / 3}});
}

TEST(Ablation, TheAuthorsVariantsWeighFutureTokens) {
    // sigmoid: future scores set to 0 first, so each future token weighs sigmoid(0) = 0.5
    const double s00 = score(0, 0);
    const double row0 = sigmoid(s00) + 0.5 + 0.5;
    const Out sig = run(norm(AttentionNorm::Sigmoid, true));
    EXPECT_NEAR(sig.weights[0][0].item<double>(), sigmoid(s00) / row0, 1e-5);
    EXPECT_NEAR(sig.weights[0][2].item<double>(), 0.5 / row0, 1e-5);
    expectWeights(
        run(norm(AttentionNorm::Uniform, true)).weights,
        {{1.0 / 3, 1.0 / 3, 1.0 / 3}, {1.0 / 3, 1.0 / 3, 1.0 / 3}, {1.0 / 3, 1.0 / 3, 1.0 / 3}});
    // relu and the others: f(0) = 0, so the same as the causal variant
    EXPECT_TRUE(torch::allclose(run(norm(AttentionNorm::Relu, true)).weights,
                                run(norm(AttentionNorm::Relu)).weights));
}

TEST(Ablation, AZeroRowSumWeighsNothingUnlessAsTheAuthors) {
    // token 0 alone with a negative score on itself: relu leaves a row of zeros
    auto x = torch::tensor({1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f}).view({1, 3, C});
    auto attn = knownAttention();
    {
        torch::NoGradGuard noGrad;
        attn->c_attn->weight.copy_(
            torch::cat({-2 * torch::eye(C), torch::eye(C), 3 * torch::eye(C)}, 0));
    }
    torch::Tensor weights;
    attn->variant = norm(AttentionNorm::Relu);
    torch::NoGradGuard noGrad;
    attn->forward(x, nullptr, nullptr, 0, {}, &weights);
    EXPECT_EQ(weights[0][0][0][0].item<double>(), 0.0);
    EXPECT_TRUE(torch::isfinite(weights).all().item<bool>());
    attn->variant = norm(AttentionNorm::Relu, true);
    attn->forward(x, nullptr, nullptr, 0, {}, &weights);
    EXPECT_TRUE(std::isnan(weights[0][0][0][0].item<double>()));  // 0 / 0, as in their code
}

TEST(Ablation, ProjectionSwitchesReplaceQueryKeyOrValueByTheInput) {
    const auto x = threeTokens()[0];
    // no_q: q = x instead of 2x, so every score halves
    AttentionVariant noQ;
    noQ.noQ = true;
    EXPECT_NEAR(run(noQ).weights[1][0].item<double>(),
                std::exp(score(1, 0) / 2) / (std::exp(score(1, 0) / 2) + std::exp(score(1, 1) / 2)),
                1e-5);
    // no_k: k = x, which it already is here: the weights of the model's own attention
    AttentionVariant noK;
    noK.noK = true;
    EXPECT_TRUE(torch::allclose(run(noK).weights, run(AttentionVariant{}).weights));
    // no_v: the output is the weighted average of x, not of 3x
    AttentionVariant noV;
    noV.noV = true;
    EXPECT_TRUE(torch::allclose(run(noV).heads * 3, run(AttentionVariant{}).heads, 1e-5, 1e-6));
    // shrink_x: q = k = v = x / 4
    AttentionVariant shrink;
    shrink.shrinkX = 4.0;
    const Out s = run(shrink);
    const double a = (x[1] * x[0]).sum().item<double>() / 16 / std::sqrt(2.0);
    const double b = (x[1] * x[1]).sum().item<double>() / 16 / std::sqrt(2.0);
    const double w10 = std::exp(a) / (std::exp(a) + std::exp(b));
    EXPECT_NEAR(s.weights[1][0].item<double>(), w10, 1e-5);
    EXPECT_NEAR(s.heads[1][0].item<double>(),
                (w10 * x[0][0].item<double>() + (1 - w10) * x[1][0].item<double>()) / 4, 1e-5);
    // v_out: the attention returns its input, untouched
    AttentionVariant out;
    out.inputOut = true;
    const Out v = run(out);
    EXPECT_TRUE(torch::equal(v.y, x));
    EXPECT_TRUE(torch::equal(v.heads, x));
}

TEST(Ablation, DrawnInputsHaveTheirShapes) {
    const auto eqx = drawAblationInputs(Ablation::Eqx, 3, 5, 16, 7);
    ASSERT_EQ(eqx.sizes(), (std::vector<int64_t>{3, 5, 16}));
    const auto norms = eqx.norm(2, -1);
    EXPECT_TRUE(torch::allclose(norms, torch::full_like(norms, 0.05)));
    const auto cos = selfCosine(eqx)[0];
    for (int i = 0; i < 5; ++i) {
        for (int j = 0; j < 5; ++j) {
            if (i != j) {  // every pair equally far apart
                EXPECT_NEAR(cos[i][j].item<double>(), cos[0][1].item<double>(), 1e-5);
            }
        }
    }
    EXPECT_LT(cos[0][1].item<double>(), 0.9);
    const auto randx = drawAblationInputs(Ablation::Randx, 2, 4, 8, 7);
    EXPECT_GE(randx.min().item<double>(), 0.0);
    EXPECT_LT(randx.max().item<double>(), 1.0);
    const auto constant = drawAblationInputs(Ablation::Constant, 2, 4, 8, 7);
    EXPECT_TRUE(torch::equal(constant[1][0], constant[1][3]));
    EXPECT_FALSE(torch::equal(constant[0][0], constant[1][0]));  // one vector per prompt
    EXPECT_TRUE(torch::equal(drawAblationInputs(Ablation::Randx, 2, 4, 8, 7), randx));  // seeded
}

Gpt smallModel() {
    return seededModel(test::smallModelConfig(2, 2, 16, 16), 5);
}

// Inputs in place of the embeddings: the model's own embeddings given as inputs give what the
// tokens give, every hidden state the same (NoPE: the embedding is the block-0 input).
TEST(Ablation, InputsTakeThePlaceOfTheEmbeddings) {
    Gpt model = smallModel();
    model->eval();
    torch::NoGradGuard noGrad;
    const auto tokens = torch::randint(3, 90, {3, 10}, torch::kLong);
    HiddenStates fromTokens, fromInputs;
    fromTokens.wanted = fromInputs.wanted = CaptureSet(allCapturePoints());
    const auto logits = model->forward(tokens, &fromTokens);
    const auto same = model->forwardInputs(model->transformer->wte(tokens), &fromInputs);
    EXPECT_TRUE(torch::equal(logits, same));
    EXPECT_TRUE(torch::equal(fromTokens.embedding, fromInputs.embedding));
    EXPECT_TRUE(torch::equal(fromTokens.resid[1], fromInputs.resid[1]));
    EXPECT_THROW(model->forwardInputs(torch::zeros({1, 17, 16})), std::invalid_argument);
}

TEST(Ablation, TheRunnerTabulatesEveryAblationAndRestoresTheModel) {
    Gpt model = smallModel();
    const auto tokens = torch::randint(3, 90, {6, 10}, torch::kLong);
    torch::NoGradGuard noGrad;
    model->eval();
    const auto before = model->forward(tokens);
    AblationConfig config;
    const AblationTable table = runAblations(*model, tokens, config);
    ASSERT_EQ(table.results.size(), allAblations().size());
    EXPECT_TRUE(torch::equal(model->forward(tokens), before));  // the model's own attention back
    AnalysisOptions own;
    const Analysis plain = analyze(*model, tokens, own);
    const Analysis& softmax = table.find(Ablation::Softmax)->analysis;
    ASSERT_EQ(softmax.rows.size(), plain.rows.size());
    for (size_t i = 0; i < plain.rows.size(); ++i) {
        EXPECT_DOUBLE_EQ(softmax.rows[i].adjacencyMean, plain.rows[i].adjacencyMean);
    }
    // v_out: no averaging anywhere, so no pattern; uniform: the averaging itself (16 dimensions
    // leave noise around the expected 1)
    const double vOut =
        table.find(Ablation::VOut)->analysis.find(CapturePoint::Attn, 1)->adjacencyMean;
    const double uniform =
        table.find(Ablation::Uniform)->analysis.find(CapturePoint::Attn, 1)->adjacencyMean;
    EXPECT_LT(vOut, 0.75);
    EXPECT_GT(uniform, 0.85);
    // the input ablations score their drawn inputs at the embedding
    EXPECT_NE(table.find(Ablation::Randx)->analysis.find(CapturePoint::Embedding, 0)->adjacencyMean,
              softmax.find(CapturePoint::Embedding, 0)->adjacencyMean);
    const std::string csv = ablationsCsv(table);
    EXPECT_EQ(csv.substr(0, csv.find('\n')), "ablation,point,layer,adjacency_mean,adjacency_std");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 16 * 3);  // embedding + 2 layers
    EXPECT_NE(csv.find("\nshrink_x,attn,2,"), std::string::npos);
}

TEST(Ablation, BadSettingsNameTheFlag) {
    AblationConfig c;
    c.shrinkX = 0.0;
    EXPECT_NE(checkAblations(c, 10, 16).value_or("").find("--shrink-x"), std::string::npos);
    c = AblationConfig{};
    EXPECT_NE(checkAblations(c, 20, 16).value_or("").find("eqx"), std::string::npos);
    c.ablations = {Ablation::Randx};
    EXPECT_FALSE(checkAblations(c, 20, 16).has_value());
    c.ablations.clear();
    EXPECT_NE(checkAblations(c, 10, 16).value_or("").find("--ablations"), std::string::npos);
    for (const auto& name : ablationNames()) {
        EXPECT_EQ(toString(*parseAblation(name)), name);
    }
    EXPECT_FALSE(parseAblation("softmax2").has_value());
}

}  // namespace
}  // namespace nope
