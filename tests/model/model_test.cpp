// The NoPE GPT: size, names, causality, capture and initialization.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "model/gpt.h"
#include "model/init.h"

namespace nope {
namespace {

ModelConfig tiny(AttentionKind attention = AttentionKind::Causal) {
    ModelConfig c;
    c.nLayer = 2;
    c.nHead = 4;
    c.nEmbd = 32;
    c.blockSize = 32;
    c.attention = attention;
    return c;
}

Gpt makeModel(const ModelConfig& config, uint64_t seed = 1) {
    torch::manual_seed(seed);
    Gpt model(config);
    initializeWeights(*model);
    model->eval();
    return model;
}

TEST(Model, DefaultParameterCount) {
    const ModelConfig config;
    EXPECT_EQ(parameterCount(config), 10658688);
    const Gpt model(config);
    EXPECT_EQ(countParameters(*model), 10658688);
}

TEST(Model, ParameterCountFormulaMatchesModules) {
    for (bool bias : {false, true}) {
        for (auto pe : {PositionalEncoding::None, PositionalEncoding::Learned,
                        PositionalEncoding::Sinusoidal}) {
            ModelConfig c = tiny();
            c.bias = bias;
            c.positional = pe;
            const Gpt model(c);
            EXPECT_EQ(countParameters(*model), parameterCount(c)) << bias << " " << toString(pe);
        }
    }
    ModelConfig learned;
    learned.positional = PositionalEncoding::Learned;
    EXPECT_EQ(parameterCount(learned), 10658688 + 256 * 384);
}

TEST(Model, ParameterNamesFollowNanoGpt) {
    const Gpt model(ModelConfig{});
    const auto params = model->named_parameters();
    for (const char* name :
         {"transformer.wte.weight", "transformer.h.0.ln_1.weight",
          "transformer.h.0.attn.c_attn.weight", "transformer.h.0.attn.c_proj.weight",
          "transformer.h.5.ln_2.weight", "transformer.h.5.mlp.c_fc.weight",
          "transformer.h.5.mlp.c_proj.weight", "transformer.ln_f.weight"}) {
        EXPECT_NE(params.find(name), nullptr) << name;
    }
    EXPECT_EQ(params.find("transformer.wpe.weight"), nullptr);  // NoPE: no position table at all
    EXPECT_EQ(params.find("transformer.h.0.attn.c_attn.bias"), nullptr);
    EXPECT_EQ(params["transformer.h.0.attn.c_attn.weight"].sizes(),
              torch::IntArrayRef({1152, 384}));
}

TEST(Model, RejectsInvalidConfig) {
    ModelConfig c;
    c.nEmbd = 100;  // not divisible by 6 heads
    const FieldErrors errors = validate(c);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "dim");
    EXPECT_THROW(Gpt{c}, std::invalid_argument);
    c = ModelConfig{};
    c.init.std = 0.0;
    ASSERT_FALSE(validate(c).empty());
    EXPECT_EQ(validate(c)[0].field, "init-std");
}

TEST(Model, LogitsShape) {
    Gpt model = makeModel(tiny());
    torch::NoGradGuard noGrad;
    const auto idx = torch::randint(0, 96, {3, 10}, torch::kLong);
    EXPECT_EQ(model->forward(idx).sizes(), torch::IntArrayRef({3, 10, 96}));
    EXPECT_EQ(model->forward(idx, nullptr, Head::LastPosition).sizes(),
              torch::IntArrayRef({3, 1, 96}));
    EXPECT_THROW(model->forward(torch::zeros({1, 33}, torch::kLong)), std::invalid_argument);
}

// Hidden states of every capture point, stacked: (points * layers, B, T, C).
torch::Tensor allHidden(Gpt& model, const torch::Tensor& idx) {
    torch::NoGradGuard noGrad;
    HiddenStates states;
    states.wanted = CaptureSet(allCapturePoints());
    model->forward(idx, &states);
    std::vector<torch::Tensor> all = {states.embedding};
    for (size_t l = 0; l < states.attn.size(); ++l) {
        all.push_back(states.attnIn[l]);
        all.push_back(states.attn[l]);
        all.push_back(states.resid[l]);
    }
    return torch::stack(all);
}

TEST(Model, CausalAttentionIgnoresLaterTokens) {
    Gpt model = makeModel(tiny());
    auto idx = torch::randint(0, 96, {2, 12}, torch::kLong);
    const auto before = allHidden(model, idx);
    idx.index_put_({torch::indexing::Slice(), 11},
                   (idx.index({torch::indexing::Slice(), 11}) + 7) % 96);
    const auto after = allHidden(model, idx);
    using torch::indexing::Slice;
    EXPECT_TRUE(torch::allclose(before.index({Slice(), Slice(), Slice(0, 11)}),
                                after.index({Slice(), Slice(), Slice(0, 11)}), 0, 1e-6));
    EXPECT_FALSE(
        torch::allclose(before.index({Slice(), Slice(), 11}), after.index({Slice(), Slice(), 11})));
}

TEST(Model, BidirectionalAttentionSeesLaterTokens) {
    Gpt model = makeModel(tiny(AttentionKind::Bidirectional));
    auto idx = torch::randint(0, 96, {2, 12}, torch::kLong);
    HiddenStates a, b;
    a.wanted = b.wanted = CaptureSet{CapturePoint::Attn};
    torch::NoGradGuard noGrad;
    model->forward(idx, &a);
    idx.index_put_({torch::indexing::Slice(), 11},
                   (idx.index({torch::indexing::Slice(), 11}) + 7) % 96);
    model->forward(idx, &b);
    const auto diff = (a.attn[0] - b.attn[0]).abs().amax({0, 2});  // per position
    EXPECT_GT(diff[0].item<float>(), 1e-6);  // the first token's output changed
}

TEST(Model, AttnCaptureIsTheHeadOutputBeforeProjection) {
    // Under causal attention position 0 attends only to itself: its attention output is its own
    // value vector, v_0 = ln_1(x_0) W_v^T.
    Gpt model = makeModel(tiny());
    torch::NoGradGuard noGrad;
    const auto idx = torch::randint(0, 96, {2, 8}, torch::kLong);
    HiddenStates states;
    states.wanted = CaptureSet{CapturePoint::Embedding, CapturePoint::AttnIn, CapturePoint::Attn};
    model->forward(idx, &states);
    auto block = model->block(0);
    const auto expectedIn = block->ln_1(states.embedding);
    EXPECT_TRUE(torch::allclose(states.attnIn[0], expectedIn, 1e-5, 1e-6));
    const int64_t C = 32;
    const auto wv = block->attn->c_attn->weight.slice(0, 2 * C, 3 * C);
    const auto v0 = torch::matmul(expectedIn.select(1, 0), wv.t());
    EXPECT_TRUE(torch::allclose(states.attn[0].select(1, 0), v0, 1e-4, 1e-5));
}

TEST(Model, CaptureDoesNotChangeTheOutput) {
    Gpt model = makeModel(tiny());
    torch::NoGradGuard noGrad;
    const auto idx = torch::randint(0, 96, {2, 8}, torch::kLong);
    HiddenStates states;
    states.wanted = CaptureSet(allCapturePoints());
    EXPECT_TRUE(torch::equal(model->forward(idx), model->forward(idx, &states)));
    EXPECT_EQ(states.resid.size(), 2u);
    EXPECT_EQ(states.resid[1].sizes(), torch::IntArrayRef({2, 8, 32}));
}

TEST(Model, LinearGradientsMatchLibTorch) {
    torch::manual_seed(0);
    // wider out than in, narrower, and square
    for (const auto& [out, in] : {std::pair{24, 16}, std::pair{16, 40}, std::pair{32, 32}}) {
        const auto w = torch::randn({out, in}, torch::requires_grad());
        const auto x = torch::randn({3, 5, in}, torch::requires_grad());
        const auto g = torch::randn({3, 5, out});
        const auto y = nope::linear(x, w, {});
        EXPECT_TRUE(torch::allclose(y, torch::linear(x, w), 1e-5, 1e-5));
        const auto grads = torch::autograd::grad({y}, {x, w}, {g});
        const auto expected = torch::autograd::grad({torch::linear(x, w)}, {x, w}, {g});
        EXPECT_TRUE(torch::allclose(grads[0], expected[0], 1e-4, 1e-5)) << out << " x " << in;
        EXPECT_TRUE(torch::allclose(grads[1], expected[1], 1e-4, 1e-5)) << out << " x " << in;
        EXPECT_TRUE(grads[1].is_contiguous());
        EXPECT_EQ(grads[1].sizes(), w.sizes());
    }
}

TEST(Init, DefaultScales) {
    ModelConfig c;  // the real sizes give tight statistics
    c.nLayer = 2;
    const Gpt model = makeModel(c);
    const auto params = model->named_parameters();
    EXPECT_NEAR(params["transformer.wte.weight"].std().item<double>(), 0.02, 0.001);
    EXPECT_NEAR(params["transformer.h.0.attn.c_attn.weight"].std().item<double>(), 0.02, 0.0005);
    EXPECT_NEAR(params["transformer.h.0.mlp.c_proj.weight"].std().item<double>(), 0.01, 0.0003);
    EXPECT_NEAR(params["transformer.h.1.attn.c_proj.weight"].std().item<double>(), 0.01, 0.0003);
    EXPECT_TRUE(torch::all(params["transformer.ln_f.weight"] == 1).item<bool>());
}

TEST(Init, NormalSchemeEveryNonLayerNormWeight) {
    ModelConfig c;
    c.nLayer = 2;
    c.positional = PositionalEncoding::Learned;
    c.init = {InitScheme::Normal, 4.0, 0.2};
    const Gpt model = makeModel(c);
    for (const auto& item : model->named_parameters()) {
        const auto& p = item.value();
        if (item.key().find(".ln_") != std::string::npos) {
            EXPECT_TRUE(torch::all(p == 1).item<bool>()) << item.key();
        } else {
            EXPECT_NEAR(p.mean().item<double>(), 4.0, 0.02) << item.key();
            EXPECT_NEAR(p.std().item<double>(), 0.2, 0.01) << item.key();
        }
    }
}

TEST(Init, SameSeedSameWeights) {
    const Gpt a = makeModel(tiny(), 5), b = makeModel(tiny(), 5), c = makeModel(tiny(), 6);
    const auto pa = a->parameters(), pb = b->parameters(), pc = c->parameters();
    EXPECT_TRUE(torch::equal(pa[3], pb[3]));
    EXPECT_FALSE(torch::equal(pa[3], pc[3]));
}

TEST(Positional, SinusoidalTable) {
    const auto table = sinusoidalTable(10, 8);
    EXPECT_FLOAT_EQ(table[0][0].item<float>(), 0.0f);
    EXPECT_FLOAT_EQ(table[0][1].item<float>(), 1.0f);
    EXPECT_NEAR(table[3][0].item<float>(), std::sin(3.0), 1e-6);
    EXPECT_NEAR(table[3][3].item<float>(), std::cos(3.0 / std::pow(10000.0, 2.0 / 8)), 1e-6);
}

}  // namespace
}  // namespace nope
