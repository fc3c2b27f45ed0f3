// Training batches for the two objectives, drawn with the project's seeded RNG (its state goes
// into checkpoints so that a resumed run draws the same batches).
//   lm      random windows of `windowLength` tokens cut from the examples (shuffled once) joined
//           by '\n'; targets are the next token at every position.
//   answer  random examples: the prompt left-padded with '\n' to the task's longest prompt (as
//           greedy decoding sees it), then the answer and its terminator, then '\n' up to one
//           common length; targets only on the answer and its terminator, -1 elsewhere.
//   masked  as answer, and the batch marks the left padding for the model to mask out of
//           attention.
//   next    the authors' per-example rows: random examples, each cut at a uniformly drawn point
//           of its answer (from the prompt alone to all but the answer's last token), left-padded
//           with ' ' to the batch's longest row, the padding marked; the one target is the next
//           answer token, at the last position. The terminator is never a target.
// A curriculum (answer, masked and next objectives) makes the first steps draw from the examples
// with the shortest prompts: see Curriculum.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "tasks/dataset.h"
#include "training/train_config.h"
#include "util/rng.h"

namespace nope {

inline constexpr int64_t kIgnoreIndex = -1;  // target of positions without loss

struct Batch {
    torch::Tensor inputs;   // (B, T) int64
    torch::Tensor targets;  // (B, T) int64, kIgnoreIndex where no loss
    torch::Tensor padding;  // (B, T) bool, the left padding; defined for masked and next
};

// Rows [first, first + count) of every tensor of the batch (views, no copy).
Batch rowsOf(const Batch& batch, int64_t first, int64_t count);
// Target tokens of the batch that carry a loss (not kIgnoreIndex).
int64_t targetTokens(const Batch& batch);

// The text an example is trained on: its line plus the terminator the decoder must produce
// ('\n', except addition, whose answer already closes with '$').
std::string trainingLine(TaskKind task, const Example& example);
// Length every answer-objective sequence is padded to: longest prompt + answer budget.
int answerSequenceLength(TaskKind task);
// The answer tokens the next objective trains: the answer without its terminator.
std::string trainedAnswer(TaskKind task, const Example& example);

// Over the first `steps` steps the batches draw from the shorter examples only. The stages are
// the prompt lengths below the longest whose examples, with all shorter ones, fill at least
// `minPool` (a batch: no stage draws from fewer examples than a batch holds); the steps are
// split evenly among them, each stage adding the examples of its length, and from step `steps`
// on the batches draw from all examples. Off with steps = 0, or where the prompts have a single
// length.
struct Curriculum {
    int steps = 0;
    int minPool = 1;
};

// One stage of a curriculum: from `firstStep` on, the examples whose prompts have at most
// `longestPrompt` characters (`examples` of them).
struct CurriculumStage {
    int firstStep = 0;
    int longestPrompt = 0;
    int64_t examples = 0;
};

class BatchSource {
public:
    BatchSource(TaskKind task, const std::vector<Example>& examples, Objective objective,
                int windowLength, uint64_t seed, Curriculum curriculum = {});

    // The batch of step `step` (which the curriculum reads; the order of draws is the RNG's).
    Batch next(int batchSize, int step = 0);
    // How many examples step `step` draws from: the shortest ones (all without a curriculum).
    int64_t poolSize(int step) const;
    // The curriculum's stages in order (none when it is off); all examples after the last.
    std::vector<CurriculumStage> curriculumStages() const;
    // Every example once, in order, in answer-objective form (for the test loss), with the
    // padding marked for the masked and next objectives. For next the targets leave out the
    // terminator: every cut point of every example at once (with causal attention and the
    // padding masked, the loss at each answer token is that of the row cut there).
    Batch answerBatch(const std::vector<Example>& examples) const;

    // The RNG state as text, for checkpoints.
    std::string rngState() const;
    void setRngState(const std::string& state);

private:
    Batch nextWindows(int batchSize);
    Batch nextAnswers(int batchSize, int step);
    Batch nextCuts(int batchSize, int step);
    std::vector<Example> drawExamples(int batchSize, int step);

    TaskKind m_task;
    const std::vector<Example>& m_examples;
    Objective m_objective;
    int m_windowLength;
    std::vector<int64_t> m_stream;  // lm: the joined, tokenized examples
    Rng m_rng;
    int m_curriculumSteps = 0;
    std::vector<size_t> m_byLength;    // curriculum: example indices, shortest prompts first
    std::vector<int64_t> m_stageEnds;  // curriculum: each stage's pool, a prefix of m_byLength
};

}  // namespace nope
