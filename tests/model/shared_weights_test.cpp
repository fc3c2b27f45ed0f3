// SharedBf16Weights (model/linear.h): the split step's bf16 weight copies, cast once for all its
// shares, against autocast's own cast in each.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "common/model_config.h"
#include "model/fast_ops.h"
#include "model/gpt.h"
#include "model/init.h"
#include "model/linear.h"
#include "util/autocast_scope.h"

namespace nope {
namespace {

struct Pass {
    torch::Tensor logits;
    std::vector<torch::Tensor> grads;
};

// The model's forward and backward under bf16 autocast, with the copies made beforehand (split
// over two threads, as the step makes them) or by autocast.
Pass run(Gpt& model, const torch::Tensor& idx, bool shared) {
    const auto params = model->parameters();
    std::optional<SharedBf16Weights> copies;
    if (shared) {
        copies.emplace(params, 2);
    }
    AutocastScope bf16(true);
    Pass pass;
    pass.logits = model->forward(idx);
    const auto loss = pass.logits.to(torch::kFloat).sin().sum();
    pass.grads = torch::autograd::grad({loss}, params, {}, false, false, /*allow_unused=*/true);
    return pass;
}

// The same logits and the same gradient of every parameter, bit for bit, the tied token embedding
// (read by the embedding in fp32 and by the head through its copy) included.
TEST(SharedBf16Weights, GiveAutocastsValuesAndGradientsBitForBit) {
    if (emulatingBf16Products()) {
        GTEST_SKIP() << "bf16 products are emulated here: the copies are not used";
    }
    torch::manual_seed(5);
    ModelConfig config = test::smallModelConfig(2, 2, 32, 64);
    config.dropout = 0.0;
    Gpt model(config);
    initializeWeights(*model);
    const auto idx = torch::randint(0, model->config().vocabSize, {4, 12}, torch::kLong);
    const Pass plain = run(model, idx, false);
    const Pass shared = run(model, idx, true);
    ASSERT_TRUE(plain.logits.isfinite().all().item<bool>());
    EXPECT_TRUE(torch::equal(plain.logits, shared.logits));
    ASSERT_EQ(plain.grads.size(), shared.grads.size());
    for (size_t i = 0; i < plain.grads.size(); ++i) {
        ASSERT_EQ(plain.grads[i].defined(), shared.grads[i].defined()) << i;
        if (plain.grads[i].defined()) {
            EXPECT_EQ(shared.grads[i].scalar_type(), torch::kFloat) << i;
            EXPECT_TRUE(torch::equal(plain.grads[i], shared.grads[i])) << i;
        }
    }
}

// The copy is what the product reads: a changed copy changes the output (so the test above
// compares two different paths), and once the copies are gone autocast casts again.
TEST(SharedBf16Weights, LinearReadsTheCopyWhileItLives) {
    if (emulatingBf16Products()) {
        GTEST_SKIP() << "bf16 products are emulated here: the copies are not used";
    }
    const auto w = torch::randn({8, 16}).requires_grad_();
    const auto x = torch::randn({3, 16});
    torch::Tensor before, changed, after;
    {
        AutocastScope bf16(true);
        before = linear(x, w, torch::Tensor());
    }
    {
        SharedBf16Weights copies({w}, 2);
        ASSERT_NE(copies.copyOf(w), nullptr);
        EXPECT_EQ(copies.copyOf(x), nullptr);
        copies.copyOf(w)->mul_(2);
        AutocastScope bf16(true);
        changed = linear(x, w, torch::Tensor());
    }
    {
        AutocastScope bf16(true);
        after = linear(x, w, torch::Tensor());
    }
    EXPECT_TRUE(torch::equal(changed, before * 2));  // doubling is exact in bf16
    EXPECT_TRUE(torch::equal(after, before));
}

}  // namespace
}  // namespace nope
