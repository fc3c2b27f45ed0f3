// The training step split between threads (Trainer::splitPart): each thread's share of the batch
// forward and backward on its own, the gradients summed, against the step in one piece.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "common/model_config.h"
#include "training/trainer.h"
#include "util/runtime.h"

namespace nope {
namespace {

ModelConfig splitModel(double dropout) {
    ModelConfig m = test::smallModelConfig(2, 2, 32, 64);
    m.dropout = dropout;
    return m;
}

TrainConfig splitTrain(Objective objective, Precision precision) {
    TrainConfig t;
    t.objective = objective;
    t.precision = precision;
    t.batchSize = 24;  // three shares' worth of rows: two threads take 12 each
    t.windowLength = 40;
    t.steps = 10;
    t.learningRate = 2e-3;
    t.warmupSteps = 1;
    t.decaySteps = 10;
    t.data = {300, 200, 5};
    return t;
}

// The first `steps` losses of a run on `threads` threads.
std::vector<double> lossCurve(int threads, const ModelConfig& m, const TrainConfig& t,
                              int steps = 8) {
    const int before = at::get_num_threads();
    applyThreadCount(threads);
    Trainer trainer(TaskKind::Addition, m, t);
    std::vector<double> losses;
    for (int i = 0; i < steps; ++i) {
        losses.push_back(trainer.stepOnce());
    }
    applyThreadCount(before);
    return losses;
}

// Without dropout the split step is the same step: the shares' losses weighted by their target
// tokens (the answer objective's rows hold different numbers) add up to the batch's mean loss, and
// their gradients to its gradient, to float32's rounding.
TEST(SplitStep, TwoThreadsFollowTheLossCurveOfOne) {
    for (Objective objective : {Objective::Answer, Objective::Lm}) {
        const ModelConfig m = splitModel(0.0);
        const TrainConfig t = splitTrain(objective, Precision::Fp32);
        const auto one = lossCurve(1, m, t);
        const auto two = lossCurve(2, m, t);
        for (size_t i = 0; i < one.size(); ++i) {
            EXPECT_NEAR(two[i], one[i], 1e-4 * std::max(1.0, std::abs(one[i])))
                << toString(objective) << " step " << i;
        }
        EXPECT_LT(two.back(), two.front()) << toString(objective);
    }
}

TEST(SplitStep, Bf16FollowsTheLossCurveOfOneWithinItsRounding) {
    const ModelConfig m = splitModel(0.0);
    const TrainConfig t = splitTrain(Objective::Answer, Precision::Bf16);
    const auto one = lossCurve(1, m, t);
    const auto two = lossCurve(2, m, t);
    for (size_t i = 0; i < one.size(); ++i) {
        EXPECT_NEAR(two[i], one[i], 0.02 * std::abs(one[i])) << "step " << i;
    }
}

// With dropout each share drops what the batch in one piece would (the masks are keyed by the
// rows' place in the batch): the curve is the one thread's, to rounding, and repeats exactly.
TEST(SplitStep, DropoutFollowsTheCurveOfOneAndRepeats) {
    const ModelConfig m = splitModel(0.1);
    const TrainConfig t = splitTrain(Objective::Answer, Precision::Fp32);
    const auto first = lossCurve(2, m, t);
    const auto again = lossCurve(2, m, t);
    EXPECT_EQ(first, again);
    const auto one = lossCurve(1, m, t);
    for (size_t i = 0; i < one.size(); ++i) {
        EXPECT_NEAR(first[i], one[i], 1e-4 * std::max(1.0, std::abs(one[i]))) << "step " << i;
    }
    EXPECT_LT(first.back(), first.front());
}

}  // namespace
}  // namespace nope
