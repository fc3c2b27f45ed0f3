// The curriculum over prompt length (BatchSource with Curriculum): shortest prompts first, one
// length more at each stage, then every example drawn as without a curriculum.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <vector>

#include "tasks/task.h"
#include "training/batches.h"

namespace nope {
namespace {

constexpr int kSteps = 90;
constexpr int kBatch = 32;

// The prompt length of each row, from the masked objective's padding.
std::vector<int> promptLengths(const Batch& batch, TaskKind task) {
    std::vector<int> lengths;
    const torch::Tensor pads = batch.padding.sum(1);
    for (int64_t b = 0; b < pads.size(0); ++b) {
        lengths.push_back(longestPrompt(task) - static_cast<int>(pads[b].item<int64_t>()));
    }
    return lengths;
}

TEST(Curriculum, DrawsTheShortestPromptsFirstOneLengthMoreAtEachStage) {
    const TaskData data = makeTaskData(TaskKind::Ordering, DataConfig{3000, 10, 1});
    size_t longest = 0;
    for (const Example& e : data.train) {
        longest = std::max(longest, e.prompt.size());
    }
    BatchSource source(TaskKind::Ordering, data.train, Objective::Masked, 40, 9,
                       Curriculum{kSteps, kBatch});
    const std::vector<CurriculumStage> stages = source.curriculumStages();
    // the stages expected: each prompt length below the longest whose examples, with the
    // shorter ones, fill a batch (ordering's prompts: 9 + 2 x the digits)
    std::map<int, int64_t> perLength;
    for (const Example& e : data.train) {
        ++perLength[static_cast<int>(e.prompt.size())];
    }
    std::vector<int> expected;
    int64_t upTo = 0;
    for (const auto& [length, count] : perLength) {
        upTo += count;
        if (length < static_cast<int>(longest) && upTo >= kBatch) {
            expected.push_back(length);
        }
    }
    ASSERT_GE(expected.size(), 2u) << "3,000 ordering examples hold 3- and 4-digit numbers";
    ASSERT_EQ(stages.size(), expected.size());
    for (size_t k = 0; k < stages.size(); ++k) {
        EXPECT_EQ(stages[k].longestPrompt, expected[k]);
        EXPECT_EQ(stages[k].firstStep, int((k * kSteps + stages.size() - 1) / stages.size()));
    }
    for (size_t k = 0; k < stages.size(); ++k) {
        const CurriculumStage& s = stages[k];
        EXPECT_GE(s.examples, kBatch);
        EXPECT_LT(s.longestPrompt, static_cast<int>(longest));
        int64_t within = 0;
        for (const Example& e : data.train) {
            within += static_cast<int>(e.prompt.size()) <= s.longestPrompt;
        }
        EXPECT_EQ(s.examples, within) << "stage " << k << " holds every example of its lengths";
        const int last = k + 1 < stages.size() ? stages[k + 1].firstStep - 1 : kSteps - 1;
        ASSERT_GE(last, s.firstStep);
        EXPECT_EQ(source.poolSize(s.firstStep), s.examples);
        EXPECT_EQ(source.poolSize(last), s.examples);
        bool newLength = false;
        for (int step : {s.firstStep, last}) {
            for (int length : promptLengths(source.next(kBatch, step), TaskKind::Ordering)) {
                EXPECT_LE(length, s.longestPrompt) << "step " << step;
                newLength = newLength || length == s.longestPrompt;
            }
        }
        EXPECT_TRUE(newLength) << "stage " << k << " draws its own length";
        if (k > 0) {
            EXPECT_GT(s.longestPrompt, stages[k - 1].longestPrompt);
        }
    }
    EXPECT_EQ(source.poolSize(kSteps), static_cast<int64_t>(data.train.size()));
    bool longestDrawn = false;
    for (int length : promptLengths(source.next(kBatch, kSteps), TaskKind::Ordering)) {
        longestDrawn = longestDrawn || length == static_cast<int>(longest);
    }
    EXPECT_TRUE(longestDrawn);
}

// After its last step, and without one, the draws are those of a source without a curriculum:
// the same RNG, one draw a row, over all examples in their order.
TEST(Curriculum, AfterItEndsBatchesAreThoseWithoutOne) {
    const TaskData data = makeTaskData(TaskKind::Ordering, DataConfig{3000, 10, 1});
    BatchSource plain(TaskKind::Ordering, data.train, Objective::Answer, 40, 9);
    BatchSource off(TaskKind::Ordering, data.train, Objective::Answer, 40, 9, Curriculum{0, 1});
    BatchSource staged(TaskKind::Ordering, data.train, Objective::Answer, 40, 9,
                       Curriculum{kSteps, kBatch});
    EXPECT_TRUE(off.curriculumStages().empty());
    for (int step = 0; step < 3; ++step) {
        const Batch a = plain.next(kBatch, step);
        EXPECT_TRUE(torch::equal(a.inputs, off.next(kBatch, step).inputs));
        EXPECT_FALSE(torch::equal(a.inputs, staged.next(kBatch, step).inputs));
    }
    const Batch a = plain.next(kBatch, kSteps);
    const Batch b = staged.next(kBatch, kSteps);
    EXPECT_TRUE(torch::equal(a.inputs, b.inputs));
    EXPECT_TRUE(torch::equal(a.targets, b.targets));
}

// The lm objective has no examples to order, and prompts of one length leave no stage.
TEST(Curriculum, NoStagesWithoutShorterPromptsOrWithWindows) {
    const TaskData data = makeTaskData(TaskKind::Ordering, DataConfig{3000, 10, 1});
    BatchSource lm(TaskKind::Ordering, data.train, Objective::Lm, 40, 9, Curriculum{kSteps, 1});
    EXPECT_TRUE(lm.curriculumStages().empty());
    EXPECT_EQ(lm.poolSize(0), static_cast<int64_t>(data.train.size()));
    BatchSource tooBig(TaskKind::Ordering, data.train, Objective::Answer, 40, 9,
                       Curriculum{kSteps, 3000});
    EXPECT_TRUE(tooBig.curriculumStages().empty());
}

}  // namespace
}  // namespace nope
