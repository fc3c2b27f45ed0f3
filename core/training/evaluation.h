// Test-set evaluation: greedy decoding with the exact-match rule (overall and by answer length),
// and the test loss of the training objective. Runs in eval mode without gradients; the model's
// mode is restored after.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <vector>

#include "model/gpt.h"
#include "run/snapshot.h"
#include "tasks/dataset.h"
#include "training/batches.h"

namespace nope {

// Greedy continuation: prompts (B, P) int64 -> the next `steps` tokens (B, steps). Uses a
// key/value cache under causal attention, full recomputation otherwise. `padding` (B, P) bool,
// when defined, masks the prompts' padding out of attention (the masked and next objectives).
torch::Tensor greedyDecode(GptImpl& model, const torch::Tensor& prompts, int steps,
                           const torch::Tensor& padding = {});

// Decodes `tokens` (N, T), the prompts left-padded as for analysis, greedily in eval mode and
// fp32, as far as the task's answer budget and the model's context allow, and judges each answer
// (tasks/task.h judgeAnswer).
std::vector<PromptAnswer> answerPrompts(GptImpl& model, TaskKind task,
                                        const std::vector<std::string>& prompts,
                                        const torch::Tensor& tokens);

// The answer a continuation gives, as the evaluation reads it: cut at the task's terminator,
// except for a model trained with the next objective, which never learned the terminator: its
// first characters, as many as `expected` has.
std::string answerRead(TaskKind task, Objective objective, const std::string& continuation,
                       const std::string& expected);

class Evaluator {
public:
    // `examples` is the (fixed) test subset that is decoded, and for the answer objective
    // scored; the lm test loss uses windows of `testSet`, which must outlive the evaluator.
    // Decoding inputs follow the objective's training format: left-padded prompts for
    // `answer`, `masked` and `next` (the padding masked for the last two), "\n" + prompt
    // (grouped by length) for `lm`. A `next` model never learned the terminator: its answer is
    // the continuation's first characters, as many as the expected answer has.
    Evaluator(TaskKind task, const std::vector<Example>& testSet, std::vector<Example> examples,
              Objective objective, int windowLength, bool bf16, torch::Device device);
    Evaluator(const Evaluator&) = delete;
    Evaluator& operator=(const Evaluator&) = delete;

    // `cancel`, when given, is checked between batches; a cancelled result says so.
    EvalResult evaluate(GptImpl& model, const std::atomic<bool>* cancel = nullptr);

private:
    double testLoss(GptImpl& model, const std::atomic<bool>* cancel);
    // False when cancelled before every prompt was decoded.
    bool decodeAll(GptImpl& model, std::vector<std::string>& produced,
                   const std::atomic<bool>* cancel);

    TaskKind m_task;
    std::vector<Example> m_examples;
    Objective m_objective;
    bool m_bf16;
    torch::Device m_device;
    BatchSource m_lossWindows;  // lm: a fixed set of test windows
    std::string m_windowState;  // RNG state that draws the same windows every time
};

// Mean cross-entropy over the positions whose target is not kIgnoreIndex.
torch::Tensor languageModelLoss(const torch::Tensor& logits, const torch::Tensor& targets);

}  // namespace nope
