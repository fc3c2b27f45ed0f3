// The learning-rate schedule and the presets: the settings a run starts from (docs/presets.md).

#include <gtest/gtest.h>

#include "run/run_spec.h"
#include "tasks/task.h"
#include "training/lr_schedule.h"
#include "training/presets.h"

namespace nope {
namespace {

TEST(Schedule, WarmupCosineFloor) {
    TrainConfig c;
    c.learningRate = 1.0;
    c.minLrRatio = 0.1;
    c.warmupSteps = 100;
    c.decaySteps = 1100;
    EXPECT_DOUBLE_EQ(learningRateAt(0, c), 0.0);
    EXPECT_DOUBLE_EQ(learningRateAt(50, c), 0.5);
    EXPECT_DOUBLE_EQ(learningRateAt(100, c), 1.0);
    EXPECT_NEAR(learningRateAt(600, c), 0.55, 1e-12);  // halfway: (peak + floor) / 2
    EXPECT_NEAR(learningRateAt(1100, c), 0.1, 1e-12);
    EXPECT_DOUBLE_EQ(learningRateAt(5000, c), 0.1);
    // the authors' numbers
    const TrainConfig paper;
    EXPECT_NEAR(learningRateAt(400, paper), 2.6441e-4, 1e-12);
    EXPECT_NEAR(learningRateAt(5000, paper), 2.6441e-5, 1e-12);
}

TEST(Presets, EveryPresetIsValidForEveryTask) {
    for (TaskKind task : allTasks()) {
        for (const std::string& name : presetNames()) {
            const auto preset = makePreset(name, task);
            ASSERT_TRUE(preset.has_value()) << name;
            const FieldErrors errors = validate(RunSpec{task, preset->model, preset->train, name});
            EXPECT_TRUE(errors.empty()) << name << " " << taskName(task) << ": "
                                        << (errors.empty() ? "" : describe(errors.front()));
            EXPECT_EQ(preset->train.decaySteps, preset->train.steps) << name;  // over all steps
        }
    }
    // The authors' runs: addition (the defaults) and rev16, wherex9, order as the training
    // script runs them (its flags over the files: per example, lr 2.6441e-4).
    const Preset paper = *makePreset("paper", TaskKind::Addition);
    EXPECT_EQ(parameterCount(paper.model), 10658688);
    EXPECT_EQ(paper.model.dropout, 0.2);
    EXPECT_EQ(paper.train.batchSize, 256);
    EXPECT_EQ(paper.train.windowLength, 256);
    EXPECT_EQ(paper.train.steps, 5000);
    EXPECT_DOUBLE_EQ(paper.train.learningRate, 2.6441e-4);
    EXPECT_EQ(paper.train.warmupSteps, 400);
    EXPECT_EQ(paper.train.objective, Objective::Lm);
    EXPECT_EQ(paper.train.precision, Precision::Bf16);
    EXPECT_EQ(paper.train.data.addition, AdditionData::Balanced);
    for (TaskKind task : {TaskKind::Reversal, TaskKind::Indexing, TaskKind::Ordering}) {
        const Preset p = *makePreset("paper", task);
        EXPECT_EQ(p.model.dropout, 0.2);
        EXPECT_EQ(p.train.objective, Objective::Next);
        EXPECT_EQ(p.train.batchSize, 4096);
        EXPECT_EQ(p.train.steps, 2000);
        EXPECT_EQ(p.train.decaySteps, 2000);
        EXPECT_DOUBLE_EQ(p.train.learningRate, 2.6441e-4);
        EXPECT_EQ(p.train.warmupSteps, 400);
        EXPECT_DOUBLE_EQ(p.train.beta2, 0.99);
    }
    EXPECT_FALSE(makePreset("slow", TaskKind::Addition).has_value());

    // The quick preset: the setup measured on the 2-core machine (docs/presets.md).
    const Preset quick = *makePreset("quick", TaskKind::Addition);
    EXPECT_EQ(quick.model.nLayer, 2);
    EXPECT_EQ(quick.model.nHead, 4);
    EXPECT_EQ(quick.model.nEmbd, 256);
    EXPECT_EQ(quick.model.dropout, 0.0);
    EXPECT_EQ(quick.train.objective, Objective::Answer);
    EXPECT_DOUBLE_EQ(quick.train.learningRate, 2e-3);
    EXPECT_EQ(quick.train.warmupSteps, 100);
    EXPECT_EQ(quick.train.evalEvery, 125);
    EXPECT_EQ(quick.train.evalSamples, 1000);
    EXPECT_EQ(quick.train.probeEvery, 4);
    EXPECT_EQ(quick.train.probe.precision, ProbePrecision::Bf16);
    EXPECT_EQ(quick.train.timeLimitMinutes, 15.0);
    EXPECT_EQ(quick.train.steps, 4000);
    EXPECT_EQ(quick.train.data.trainSize, 50000);
    EXPECT_EQ(quick.train.data.addition, AdditionData::Balanced);      // the authors' data
    const Preset reversal = *makePreset("quick", TaskKind::Reversal);  // docs/presets.md
    EXPECT_EQ(reversal.train.steps, 1200);
    EXPECT_EQ(reversal.train.decaySteps, 1200);
    EXPECT_EQ(reversal.train.data.trainSize, 50000);
    EXPECT_DOUBLE_EQ(reversal.train.learningRate, 2.5e-3);
    EXPECT_DOUBLE_EQ(reversal.train.beta2, 0.95);
    EXPECT_DOUBLE_EQ(quick.train.beta2, 0.95);
    EXPECT_DOUBLE_EQ(makePreset("quick", TaskKind::Indexing)->train.beta2, 0.99);
    const Preset ordering = *makePreset("quick", TaskKind::Ordering);  // docs/presets.md
    EXPECT_EQ(ordering.train.data.trainSize, 100000);
    EXPECT_DOUBLE_EQ(ordering.train.learningRate, 5e-4);
    EXPECT_EQ(ordering.train.batchSize, 512);
    EXPECT_EQ(ordering.train.steps, 16000);
    EXPECT_EQ(ordering.model.nEmbd, 128);  // a third of the time a step of width 256 takes
    EXPECT_DOUBLE_EQ(ordering.train.minLrRatio, 1.0);  // a constant rate after the warm-up
    EXPECT_DOUBLE_EQ(learningRateAt(5000, ordering.train), 5e-4);
    EXPECT_EQ(ordering.train.evalEvery, 250);
    EXPECT_EQ(ordering.train.timeLimitMinutes, 45.0);
    EXPECT_EQ(ordering.train.objective, Objective::Masked);  // the padding masked out
    EXPECT_EQ(ordering.train.curriculumSteps, 4000);         // short numbers first
    EXPECT_EQ(quick.train.curriculumSteps, 0);
    EXPECT_DOUBLE_EQ(quick.train.minLrRatio, 0.1);  // the other tasks decay to a tenth
    const Preset indexing = *makePreset("quick", TaskKind::Indexing);  // docs/presets.md
    EXPECT_DOUBLE_EQ(indexing.train.learningRate, 5e-4);
    EXPECT_EQ(indexing.train.batchSize, 512);
    EXPECT_EQ(indexing.train.steps, 5000);
    EXPECT_EQ(indexing.train.decaySteps, 5000);
    EXPECT_EQ(indexing.train.timeLimitMinutes, 30.0);
}

// The paper's model for a CPU (docs/presets.md): its shape exactly, per example with the padding
// masked, a 45-minute limit (indexing and ordering: 60).
TEST(Presets, CpuIsThePapersModel) {
    const Preset paper = *makePreset("paper", TaskKind::Reversal);
    for (TaskKind task : allTasks()) {
        const Preset cpu = *makePreset("cpu", task);
        EXPECT_EQ(parameterCount(cpu.model), parameterCount(paper.model)) << taskName(task);
        EXPECT_EQ(cpu.model.nLayer, 6);
        EXPECT_EQ(cpu.model.nHead, 6);
        EXPECT_EQ(cpu.model.nEmbd, 384);
        EXPECT_EQ(cpu.model.positional, paper.model.positional);
        EXPECT_EQ(cpu.model.attention, paper.model.attention);
        EXPECT_EQ(cpu.train.objective, Objective::Masked);
        EXPECT_EQ(cpu.train.batchSize, 128);
        EXPECT_DOUBLE_EQ(cpu.train.learningRate, 1e-3);
        EXPECT_DOUBLE_EQ(cpu.train.beta2, 0.95);
        EXPECT_EQ(cpu.train.data.trainSize, 50000);
        EXPECT_EQ(cpu.train.stopAccuracy, 99.0);
        const bool long_ = task == TaskKind::Indexing || task == TaskKind::Ordering;
        EXPECT_EQ(cpu.train.timeLimitMinutes, long_ ? 60.0 : 45.0) << taskName(task);
    }
}

}  // namespace
}  // namespace nope
