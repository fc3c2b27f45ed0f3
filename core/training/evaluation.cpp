#include "training/evaluation.h"

#include <chrono>
#include <map>

#include "tasks/batch.h"
#include "tasks/vocab.h"
#include "util/autocast_scope.h"
#include "util/stopwatch.h"

namespace nope {

namespace {

constexpr int kDecodeBatch = 512;
constexpr int kLossBatches = 4;
constexpr int kLossWindowsPerBatch = 64;
constexpr size_t kShownPredictions = 6;

bool stopAsked(const std::atomic<bool>* cancel) {
    return cancel && cancel->load();
}

// Eval mode, no gradients, the run's precision; the model's mode restored on exit.
class EvalScope {
public:
    EvalScope(GptImpl& model, bool bf16)
        : m_model(model), m_wasTraining(model.is_training()), m_autocast(bf16) {
        m_model.eval();
    }
    ~EvalScope() { m_model.train(m_wasTraining); }

private:
    GptImpl& m_model;
    bool m_wasTraining;
    AutocastScope m_autocast;
    torch::NoGradGuard m_noGrad;
};

// The left padding of decoding inputs (B, P): the characters before each example's prompt.
torch::Tensor leadingPadding(const std::vector<std::string>& texts,
                             const std::vector<Example>& examples,
                             const std::vector<size_t>& members, size_t start) {
    const auto B = static_cast<int64_t>(texts.size());
    const auto P = static_cast<int64_t>(texts.front().size());
    auto padding = torch::zeros({B, P}, torch::kBool);
    bool* pad = padding.data_ptr<bool>();
    for (int64_t b = 0; b < B; ++b) {
        std::fill_n(pad + b * P, P - examples[members[start + b]].prompt.size(), true);
    }
    return padding;
}

}  // namespace

torch::Tensor languageModelLoss(const torch::Tensor& logits, const torch::Tensor& targets) {
    return torch::nn::functional::cross_entropy(
        logits.reshape({-1, logits.size(-1)}).to(torch::kFloat), targets.reshape({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex));
}

torch::Tensor greedyDecode(GptImpl& model, const torch::Tensor& prompts, int steps,
                           const torch::Tensor& padding) {
    std::vector<torch::Tensor> out;
    if (model.config().attention == AttentionKind::Causal) {
        KvCache cache;
        auto logits = model.forward(prompts, nullptr, Head::LastPosition, &cache, padding);
        for (int s = 0; s < steps; ++s) {
            auto next = logits.select(1, 0).argmax(-1, /*keepdim=*/true);  // (B, 1)
            out.push_back(next);
            if (s + 1 < steps) {
                logits = model.forward(next, nullptr, Head::LastPosition, &cache);
            }
        }
    } else {
        auto sequence = prompts;
        auto mask = padding;
        for (int s = 0; s < steps; ++s) {
            auto logits = model.forward(sequence, nullptr, Head::LastPosition, nullptr, mask);
            auto next = logits.select(1, 0).argmax(-1, /*keepdim=*/true);
            out.push_back(next);
            sequence = torch::cat({sequence, next}, 1);
            if (mask.defined()) {  // generated tokens are never padding
                mask = torch::cat({mask, torch::zeros_like(next, mask.options())}, 1);
            }
        }
    }
    return torch::cat(out, 1);
}

std::vector<PromptAnswer> answerPrompts(GptImpl& model, TaskKind task,
                                        const std::vector<std::string>& prompts,
                                        const torch::Tensor& tokens) {
    std::vector<PromptAnswer> out;
    const int steps = std::min<int>(answerBudget(task),
                                    model.config().blockSize - static_cast<int>(tokens.size(1)));
    torch::Tensor produced;
    if (steps > 0) {
        EvalScope scope(model, /*bf16=*/false);
        const auto device = model.transformer->wte->weight.device();
        std::vector<torch::Tensor> parts;  // in batches, however many prompts a file holds
        for (int64_t start = 0; start < tokens.size(0); start += kDecodeBatch) {
            const auto chunk =
                tokens.slice(0, start, std::min<int64_t>(tokens.size(0), start + kDecodeBatch));
            parts.push_back(greedyDecode(model, chunk.to(device), steps).to(torch::kCPU));
        }
        produced = torch::cat(parts);
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
        std::string continuation;
        if (produced.defined()) {
            const auto row = produced[static_cast<int64_t>(i)].contiguous();
            continuation =
                vocab::decode({row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel()});
        }
        out.push_back(judgeAnswer(task, prompts[i], continuation));
    }
    return out;
}

std::string answerRead(TaskKind task, Objective objective, const std::string& continuation,
                       const std::string& expected) {
    return objective == Objective::Next ? continuation.substr(0, expected.size())
                                        : extractAnswer(task, continuation);
}

Evaluator::Evaluator(TaskKind task, const std::vector<Example>& testSet,
                     std::vector<Example> examples, Objective objective, int windowLength,
                     bool bf16, torch::Device device)
    : m_task(task),
      m_examples(std::move(examples)),
      m_objective(objective),
      m_bf16(bf16),
      m_device(device),
      m_lossWindows(task, testSet, objective, windowLength, /*seed=*/0x7e57) {
    m_windowState = m_lossWindows.rngState();
}

bool Evaluator::decodeAll(GptImpl& model, std::vector<std::string>& produced,
                          const std::atomic<bool>* cancel) {
    // Group prompts by their decoding input so that each batch has one length.
    std::map<size_t, std::vector<size_t>> groups;
    std::vector<std::string> inputs(m_examples.size());
    for (size_t i = 0; i < m_examples.size(); ++i) {
        inputs[i] = m_objective != Objective::Lm
                        ? leftPad(m_examples[i].prompt, longestPrompt(m_task))
                        : "\n" + m_examples[i].prompt;
        groups[inputs[i].size()].push_back(i);
    }
    produced.assign(m_examples.size(), {});
    const int steps = answerBudget(m_task);
    for (const auto& [length, members] : groups) {
        for (size_t start = 0; start < members.size(); start += kDecodeBatch) {
            if (stopAsked(cancel)) {
                return false;
            }
            const size_t end = std::min(members.size(), start + kDecodeBatch);
            std::vector<std::string> texts;
            for (size_t m = start; m < end; ++m) {
                texts.push_back(inputs[members[m]]);
            }
            torch::Tensor padding;
            if (masksPadding(m_objective)) {
                padding = leadingPadding(texts, m_examples, members, start).to(m_device);
            }
            const auto generated =
                greedyDecode(model, encodeBatch(texts).to(m_device), steps, padding)
                    .to(torch::kCPU);
            const int64_t* ids = generated.data_ptr<int64_t>();
            for (size_t m = start; m < end; ++m) {
                std::string& text = produced[members[m]];
                for (int s = 0; s < steps; ++s) {
                    text.push_back(vocab::decode(ids[(m - start) * steps + s]));
                }
            }
        }
    }
    return true;
}

double Evaluator::testLoss(GptImpl& model, const std::atomic<bool>* cancel) {
    double sum = 0.0;
    int count = 0;
    if (m_objective == Objective::Lm) {
        m_lossWindows.setRngState(m_windowState);
        for (int b = 0; b < kLossBatches; ++b) {
            if (stopAsked(cancel)) {
                break;
            }
            const Batch batch = m_lossWindows.next(kLossWindowsPerBatch);
            const auto logits = model.forward(batch.inputs.to(m_device));
            sum += languageModelLoss(logits, batch.targets.to(m_device)).item<double>();
            ++count;
        }
        return count > 0 ? sum / count : std::nan("");
    }
    for (size_t start = 0; start < m_examples.size(); start += kDecodeBatch) {
        if (stopAsked(cancel)) {
            break;
        }
        const std::vector<Example> chunk(
            m_examples.begin() + start,
            m_examples.begin() + std::min(m_examples.size(), start + kDecodeBatch));
        const Batch batch = m_lossWindows.answerBatch(chunk);
        const auto logits = model.forward(batch.inputs.to(m_device), nullptr, Head::AllPositions,
                                          nullptr, batch.padding);
        sum += languageModelLoss(logits, batch.targets.to(m_device)).item<double>() *
               double(chunk.size());
        count += static_cast<int>(chunk.size());
    }
    return count > 0 ? sum / count : std::nan("");
}

EvalResult Evaluator::evaluate(GptImpl& model, const std::atomic<bool>* cancel) {
    const auto start = std::chrono::steady_clock::now();
    EvalScope scope(model, m_bf16);
    EvalResult result;
    result.testLoss = testLoss(model, cancel);
    std::vector<std::string> produced;
    if (!decodeAll(model, produced, cancel) || stopAsked(cancel)) {
        result.cancelled = true;
        return result;
    }
    std::map<int, LengthAccuracy> byLength;
    for (size_t i = 0; i < m_examples.size(); ++i) {
        const Example& e = m_examples[i];
        const std::string expected = extractAnswer(m_task, e.answer);
        const std::string answer = answerRead(m_task, m_objective, produced[i], expected);
        const bool ok = answer == expected;
        const int length = static_cast<int>(expected.size());
        auto& bucket = byLength[length];
        bucket.answerLength = length;
        bucket.correct += ok ? 1 : 0;
        bucket.total += 1;
        result.correct += ok ? 1 : 0;
        if (result.predictions.size() < kShownPredictions) {
            result.predictions.push_back({e.prompt, e.answer, answer, ok});
        }
    }
    result.total = static_cast<int>(m_examples.size());
    result.accuracy = result.total == 0 ? 0.0 : 100.0 * result.correct / result.total;
    for (const auto& [length, bucket] : byLength) {
        result.byLength.push_back(bucket);
    }
    result.seconds = secondsSince(start);
    return result;
}

}  // namespace nope
