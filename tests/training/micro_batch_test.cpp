// Micro-batches (gradient accumulation): a step's batch in parts, their gradients summed before
// the one optimizer step. The gradient must be the whole batch's, dropout included, in fp32 and
// bf16, whatever the parts and threads; the automatic count follows the memory estimate.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/model_config.h"
#include "training/trainer.h"
#include "util/memory.h"
#include "util/runtime.h"

namespace nope {
namespace {

ModelConfig microModel() {
    ModelConfig m = test::smallModelConfig(2, 2, 32, 64);
    m.dropout = 0.1;  // the parts must drop what the whole batch drops
    return m;
}

// The authors' objective: rows of different lengths and one target each; 18 rows cut in parts of
// 6, 4 and 1 row(s).
TrainConfig microTrain(Precision precision, int microBatches) {
    TrainConfig t;
    t.objective = Objective::Next;
    t.precision = precision;
    t.batchSize = 18;
    t.microBatches = microBatches;
    t.steps = 10;
    t.learningRate = 2e-3;
    t.warmupSteps = 1;
    t.decaySteps = 10;
    t.data = {300, 200, 5};
    return t;
}

StepGradients stepGradients(Precision precision, int microBatches, int threads, int step) {
    TrainConfig t = microTrain(precision, microBatches);
    t.threads = threads;
    Trainer trainer(TaskKind::Reversal, microModel(), t);
    EXPECT_EQ(trainer.microBatches(), microBatches);
    return trainer.gradients(step);
}

// max |a - b| over every parameter, against max |a|
double worstDifference(const StepGradients& a, const StepGradients& b, double* scale) {
    double worst = 0.0;
    *scale = 0.0;
    EXPECT_EQ(a.gradients.size(), b.gradients.size());
    for (size_t i = 0; i < a.gradients.size() && i < b.gradients.size(); ++i) {
        EXPECT_EQ(a.gradients[i].first, b.gradients[i].first);
        const auto& x = a.gradients[i].second;
        const auto& y = b.gradients[i].second;
        worst = std::max(worst, (x - y).abs().max().item<double>());
        *scale = std::max(*scale, x.abs().max().item<double>());
    }
    return worst;
}

TEST(MicroBatches, AccumulatedGradientIsTheWholeBatchsInFp32AndBf16) {
    const int before = at::get_num_threads();
    for (const Precision precision : {Precision::Fp32, Precision::Bf16}) {
        // bf16: the same products of the same rounded values, summed in another order
        const double tolerance = precision == Precision::Fp32 ? 2e-5 : 2e-2;
        for (const int threads : {1, 2}) {
            const StepGradients whole = stepGradients(precision, 1, threads, 3);
            ASSERT_TRUE(std::isfinite(whole.loss));
            for (const int parts : {3, 5, 18}) {
                const StepGradients split = stepGradients(precision, parts, threads, 3);
                EXPECT_NEAR(split.loss, whole.loss, tolerance * whole.loss)
                    << toString(precision) << " " << parts << " parts, " << threads << " threads";
                double scale = 0.0;
                const double worst = worstDifference(split, whole, &scale);
                EXPECT_GT(scale, 0.0);
                EXPECT_LE(worst, tolerance * scale)
                    << toString(precision) << " " << parts << " parts, " << threads << " threads";
            }
        }
    }
    applyThreadCount(before);
}

// The check can fail: another step's batch (other rows, other dropout) gives another gradient.
TEST(MicroBatches, AnotherStepsGradientDiffers) {
    const StepGradients a = stepGradients(Precision::Fp32, 3, 1, 3);
    const StepGradients b = stepGradients(Precision::Fp32, 3, 1, 4);
    double scale = 0.0;
    EXPECT_GT(worstDifference(a, b, &scale), 0.05 * scale);
}

// A run in parts follows the run in one piece: the same losses, step after step.
TEST(MicroBatches, ARunInPartsFollowsTheRunInOnePiece) {
    std::vector<std::vector<double>> curves;
    for (const int parts : {1, 4}) {
        Trainer trainer(TaskKind::Reversal, microModel(), microTrain(Precision::Fp32, parts));
        std::vector<double> losses;
        for (int i = 0; i < 6; ++i) {
            losses.push_back(trainer.stepOnce());
        }
        curves.push_back(losses);
    }
    for (size_t i = 0; i < curves[0].size(); ++i) {
        EXPECT_NEAR(curves[1][i], curves[0][i], 1e-4 * curves[0][i]) << "step " << i;
    }
}

// Automatic: as few parts as fit in 85% of the available memory; one when the batch fits.
TEST(MicroBatches, TheAutomaticCountFollowsTheMemoryEstimate) {
    RunSpec spec{TaskKind::Reversal, microModel(), microTrain(Precision::Fp32, 0)};
    TrainingPlan plan = trainingPlan(spec);
    EXPECT_EQ(plan.microBatches, 1);
    EXPECT_EQ(plan.rows, 18);
    const auto available = availableMemory();
    ASSERT_TRUE(available.has_value());
    // the paper's reversal recipe: 6 x 384, batch 4,096 of the next objective
    spec.model = ModelConfig{};
    spec.train.batchSize = 4096;
    const double whole =
        trainingMemory(spec.model, 4096, trainingTokens(spec), false, true).total();
    plan = trainingPlan(spec);
    if (whole > kMemoryAim * *available) {
        EXPECT_GT(plan.microBatches, 1);
    }
    EXPECT_LE(plan.memory.total(), kMemoryAim * *available);
    EXPECT_TRUE(plan.fits());
    EXPECT_EQ(plan.rows, (4096 + plan.microBatches - 1) / plan.microBatches);
    if (plan.microBatches > 1) {  // the fewest: one part fewer would not fit
        const int rows = (4096 + plan.microBatches - 2) / (plan.microBatches - 1);
        EXPECT_GT(trainingMemory(spec.model, rows, trainingTokens(spec), false, true).total(),
                  kMemoryAim * *available);
    }
    // set by hand: that many, whatever the memory
    spec.train.microBatches = 7;
    plan = trainingPlan(spec);
    EXPECT_EQ(plan.microBatches, 7);
    EXPECT_EQ(plan.rows, 586);
    Trainer trainer(TaskKind::Reversal, microModel(), microTrain(Precision::Fp32, 0));
    EXPECT_EQ(trainer.microBatches(), 1);
}

TEST(MicroBatches, MoreThanTheBatchIsRefusedByName) {
    const FieldErrors errors = validate(microTrain(Precision::Fp32, 19), 64);
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors.front().field, "micro-batches");
    EXPECT_NE(errors.front().message.find("the {batch} of 18"), std::string::npos)
        << errors.front().message;
}

}  // namespace
}  // namespace nope
