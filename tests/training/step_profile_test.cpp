// Where a step's time goes (bench --profile): operator names to categories, and a profiled step
// of a tiny model whose self times, with the time outside any operator, add up to the step.
#include <gtest/gtest.h>

#include "common/model_config.h"
#include "training/step_profile.h"
#include "training/trainer.h"
#include "util/runtime.h"

namespace nope {
namespace {

TEST(StepProfile, NamesFallIntoTheirCategories) {
    EXPECT_EQ(profileCategory("aten::mm"), "matrix products");
    EXPECT_EQ(profileCategory("nope::linear_backward"), "matrix products");
    EXPECT_EQ(profileCategory("nope::batched_matmul"), "matrix products");
    EXPECT_EQ(profileCategory("aten::_softmax"), "attention softmax and mask");
    EXPECT_EQ(profileCategory("nope::attention"), "attention in one pass");
    EXPECT_EQ(profileCategory("nope::attention_backward"), "attention in one pass");
    EXPECT_EQ(profileCategory("aten::_log_softmax"), "loss");
    EXPECT_EQ(profileCategory("aten::native_layer_norm_backward"), "LayerNorm");
    EXPECT_EQ(profileCategory("nope::gelu_backward"), "GELU");
    EXPECT_EQ(profileCategory("nope::dropout"), "dropout");
    EXPECT_EQ(profileCategory("nope::adamw"), "optimizer");
    EXPECT_EQ(profileCategory("aten::copy_"), "casts and copies");
    EXPECT_EQ(profileCategory("aten::empty_strided"), "allocation");
    EXPECT_EQ(profileCategory("aten::transpose"), "views");
    EXPECT_EQ(profileCategory("autograd::engine::evaluate_function: MmBackward0"),
              "autograd engine");
    EXPECT_EQ(profileCategory("aten::add_"), "other elementwise");
}

// On two threads the split step (Trainer::splitPart) runs operators side by side: their self
// times add up to more than the wall time, and the shares are of that sum.
TEST(StepProfile, SelfTimesAddUpToTheStep) {
    ModelConfig m = test::smallModelConfig(1, 2, 32, 64);
    m.dropout = 0.1;
    TrainConfig t;
    t.objective = Objective::Lm;
    t.batchSize = 16;
    t.windowLength = 16;
    t.data = {200, 100, 3};
    const int before = at::get_num_threads();
    for (int threads : {1, 2}) {
        applyThreadCount(threads);
        Trainer trainer(TaskKind::Addition, m, t);
        trainer.stepOnce();
        const StepProfile p = profileSteps(trainer, 2);
        EXPECT_EQ(p.steps, 2);
        EXPECT_GT(p.stepMs, 0.0);
        EXPECT_GE(p.busyMs, p.stepMs);
        double total = 0.0;
        bool sawMatrixProducts = false, sawOptimizer = false;
        for (const auto& c : p.categories) {
            total += c.share;
            sawMatrixProducts |= c.name == "matrix products" && c.msPerStep > 0.0;
            sawOptimizer |= c.name == "optimizer" && c.msPerStep > 0.0;
        }
        // a range may outlast the step's clock by its bookkeeping
        EXPECT_NEAR(total, 1.0, 0.1) << threads << " threads";
        EXPECT_TRUE(sawMatrixProducts);
        EXPECT_TRUE(sawOptimizer);
        ASSERT_FALSE(p.operators.empty());
        EXPECT_GE(p.operators.front().msPerStep, p.operators.back().msPerStep);  // largest first
    }
    applyThreadCount(before);
}

}  // namespace
}  // namespace nope
