// SharedBf16Weights (model/linear.h): the split step's bf16 weight copies, cast once for all its
// shares, against autocast's own cast in each.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <ATen/Parallel.h>

#include <optional>
#include <thread>
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

// The copies belong to the thread that made them and to the parts onEachThread runs from there;
// a thread of its own (another trainer's) never sees them, and the pool's threads forget them
// when their part ends.
TEST(SharedBf16Weights, SeenByTheSharesOnly) {
    const auto w = torch::randn({8, 16}).requires_grad_();
    const int before = at::get_num_threads();
    at::set_num_threads(2);
    {
        SharedBf16Weights copies({w}, 2);
        EXPECT_EQ(sharedBf16Weights(), &copies);
        copies.copyOf(w)->zero_();  // what the shares' products read
        std::vector<const SharedBf16Weights*> seen(2, nullptr);
        std::vector<torch::Tensor> products(2);
        AutocastScope bf16(true);
        onEachThread(2, [&](int64_t i) {
            seen[i] = sharedBf16Weights();
            products[i] = linear(torch::ones({3, 16}), w, torch::Tensor());
        });
        EXPECT_EQ(seen[0], &copies);
        EXPECT_EQ(seen[1], &copies);
        if (!emulatingBf16Products()) {  // emulated products round the fp32 weights instead
            EXPECT_TRUE(products[0].eq(0).all().item<bool>());
            EXPECT_TRUE(products[1].eq(0).all().item<bool>());
        }
        const SharedBf16Weights* elsewhere = &copies;
        std::thread([&] { elsewhere = sharedBf16Weights(); }).join();
        EXPECT_EQ(elsewhere, nullptr);
    }
    EXPECT_EQ(sharedBf16Weights(), nullptr);
    const auto* unread = reinterpret_cast<const SharedBf16Weights*>(&w);  // not a pointer it holds
    std::vector<const SharedBf16Weights*> after(2, unread);
    at::parallel_for(0, 2, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            after[i] = sharedBf16Weights();
        }
    });
    EXPECT_EQ(after[0], nullptr);
    EXPECT_EQ(after[1], nullptr);
    at::set_num_threads(before);
}

}  // namespace
}  // namespace nope
