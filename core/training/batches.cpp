#include "training/batches.h"

#include <algorithm>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "tasks/task.h"
#include "tasks/vocab.h"

namespace nope {

Batch rowsOf(const Batch& batch, int64_t first, int64_t count) {
    const auto rows = [&](const torch::Tensor& t) {
        return t.defined() ? t.narrow(0, first, count) : t;
    };
    return {rows(batch.inputs), rows(batch.targets), rows(batch.padding)};
}

int64_t targetTokens(const Batch& batch) {
    return (batch.targets != kIgnoreIndex).sum().item<int64_t>();
}

std::string trainingLine(TaskKind task, const Example& example) {
    return example.text() + (task == TaskKind::Addition ? "" : "\n");
}

int answerSequenceLength(TaskKind task) {
    return longestPrompt(task) + answerBudget(task);
}

std::string trainedAnswer(TaskKind task, const Example& example) {
    return extractAnswer(task, example.answer);
}

BatchSource::BatchSource(TaskKind task, const std::vector<Example>& examples, Objective objective,
                         int windowLength, uint64_t seed, Curriculum curriculum)
    : m_task(task),
      m_examples(examples),
      m_objective(objective),
      m_windowLength(windowLength),
      m_rng(seed) {
    if (examples.empty()) {
        throw std::invalid_argument("no training examples");
    }
    if (curriculum.steps > 0 && objective != Objective::Lm) {
        m_curriculumSteps = curriculum.steps;
        m_byLength.resize(examples.size());
        std::iota(m_byLength.begin(), m_byLength.end(), size_t{0});
        std::stable_sort(m_byLength.begin(), m_byLength.end(), [&](size_t a, size_t b) {
            return examples[a].prompt.size() < examples[b].prompt.size();
        });
        // a stage ends after the last example of each prompt length but the longest
        for (size_t i = 1; i < m_byLength.size(); ++i) {
            const bool longer =
                examples[m_byLength[i]].prompt.size() > examples[m_byLength[i - 1]].prompt.size();
            if (longer && static_cast<int64_t>(i) >= curriculum.minPool) {
                m_stageEnds.push_back(static_cast<int64_t>(i));
            }
        }
    }
    if (objective == Objective::Lm) {
        std::vector<size_t> order(examples.size());
        std::iota(order.begin(), order.end(), size_t{0});
        shuffleInPlace(order, m_rng);
        for (size_t i : order) {
            for (char c : examples[i].text() + "\n") {
                m_stream.push_back(vocab::encode(c));
            }
        }
        if (static_cast<int64_t>(m_stream.size()) < windowLength + 1) {
            throw std::invalid_argument("the joined examples (" + std::to_string(m_stream.size()) +
                                        " tokens) are shorter than one window of " +
                                        std::to_string(windowLength) + "; lower --window");
        }
    }
}

Batch BatchSource::next(int batchSize, int step) {
    switch (m_objective) {
        case Objective::Lm:
            return nextWindows(batchSize);
        case Objective::Next:
            return nextCuts(batchSize, step);
        case Objective::Answer:
        case Objective::Masked:
            break;
    }
    return nextAnswers(batchSize, step);
}

int64_t BatchSource::poolSize(int step) const {
    if (m_stageEnds.empty() || step >= m_curriculumSteps) {
        return static_cast<int64_t>(m_examples.size());
    }
    const auto stages = static_cast<int64_t>(m_stageEnds.size());
    return m_stageEnds[std::max<int64_t>(0, step) * stages / m_curriculumSteps];
}

std::vector<CurriculumStage> BatchSource::curriculumStages() const {
    std::vector<CurriculumStage> stages;
    const auto count = static_cast<int64_t>(m_stageEnds.size());
    for (int64_t k = 0; k < count; ++k) {
        const int64_t end = m_stageEnds[k];
        // the first step s with s * count / steps = k
        const int64_t first = (k * m_curriculumSteps + count - 1) / count;
        stages.push_back({static_cast<int>(first),
                          static_cast<int>(m_examples[m_byLength[end - 1]].prompt.size()), end});
    }
    return stages;
}

Batch BatchSource::nextWindows(int batchSize) {
    const int64_t T = m_windowLength;
    auto inputs = torch::empty({batchSize, T}, torch::kLong);
    auto targets = torch::empty({batchSize, T}, torch::kLong);
    int64_t* x = inputs.data_ptr<int64_t>();
    int64_t* y = targets.data_ptr<int64_t>();
    const uint64_t lastStart = m_stream.size() - static_cast<size_t>(T) - 1;
    for (int b = 0; b < batchSize; ++b) {
        const size_t start = uniformInt(m_rng, 0, lastStart);
        std::copy_n(m_stream.begin() + start, T, x + b * T);
        std::copy_n(m_stream.begin() + start + 1, T, y + b * T);
    }
    return {inputs, targets, {}};
}

std::vector<Example> BatchSource::drawExamples(int batchSize, int step) {
    const int64_t pool = poolSize(step);
    const bool staged = pool < static_cast<int64_t>(m_examples.size());
    std::vector<Example> chosen;
    chosen.reserve(batchSize);
    for (int b = 0; b < batchSize; ++b) {
        const size_t drawn = uniformInt(m_rng, 0, pool - 1);
        chosen.push_back(m_examples[staged ? m_byLength[drawn] : drawn]);
    }
    return chosen;
}

Batch BatchSource::nextAnswers(int batchSize, int step) {
    return answerBatch(drawExamples(batchSize, step));
}

Batch BatchSource::nextCuts(int batchSize, int step) {
    const std::vector<Example> chosen = drawExamples(batchSize, step);
    std::vector<std::string> rows;
    std::vector<char> following;  // each row's target
    rows.reserve(chosen.size());
    following.reserve(chosen.size());
    size_t longest = 0;
    for (const Example& e : chosen) {
        const std::string answer = trainedAnswer(m_task, e);
        if (answer.empty()) {
            throw std::invalid_argument("example '" + e.text() + "' has no answer to cut");
        }
        // the answer tokens given: none (the row ends with '=') to all but the last
        const size_t given = uniformInt(m_rng, 0, answer.size() - 1);
        rows.push_back(e.prompt + answer.substr(0, given));
        following.push_back(answer[given]);
        longest = std::max(longest, rows.back().size());
    }
    const auto B = static_cast<int64_t>(rows.size());
    const auto T = static_cast<int64_t>(longest);
    auto inputs = torch::full({B, T}, vocab::encode(' '), torch::kLong);
    auto targets = torch::full({B, T}, kIgnoreIndex, torch::kLong);
    auto padding = torch::zeros({B, T}, torch::kBool);
    int64_t* x = inputs.data_ptr<int64_t>();
    int64_t* y = targets.data_ptr<int64_t>();
    bool* pad = padding.data_ptr<bool>();
    for (int64_t b = 0; b < B; ++b) {
        const std::string& row = rows[b];
        const int64_t first = T - static_cast<int64_t>(row.size());  // right-aligned
        std::fill_n(pad + b * T, first, true);
        for (size_t i = 0; i < row.size(); ++i) {
            x[b * T + first + static_cast<int64_t>(i)] = vocab::encode(row[i]);
        }
        y[b * T + T - 1] = vocab::encode(following[b]);
    }
    return {inputs, targets, padding};
}

Batch BatchSource::answerBatch(const std::vector<Example>& examples) const {
    // "<prompt left-padded to P><answer><terminator>", right-filled with '\n' to L: the prompt
    // sits exactly where greedy decoding puts it, and targets cover only the answer.
    const int P = longestPrompt(m_task);
    const int64_t L = answerSequenceLength(m_task);
    const int64_t T = L - 1;
    const auto B = static_cast<int64_t>(examples.size());
    auto inputs = torch::empty({B, T}, torch::kLong);
    auto targets = torch::full({B, T}, kIgnoreIndex, torch::kLong);
    int64_t* x = inputs.data_ptr<int64_t>();
    int64_t* y = targets.data_ptr<int64_t>();
    torch::Tensor padding;
    bool* pad = nullptr;
    if (masksPadding(m_objective)) {
        padding = torch::zeros({B, T}, torch::kBool);
        pad = padding.data_ptr<bool>();
    }
    for (int64_t b = 0; b < B; ++b) {
        const Example& e = examples[b];
        std::string line = leftPad(e.prompt, P) + trainingLine(m_task, e).substr(e.prompt.size());
        if (static_cast<int64_t>(line.size()) > L || static_cast<int>(e.prompt.size()) > P) {
            throw std::invalid_argument("example '" + e.text() + "' does not fit " +
                                        std::to_string(L) + " tokens");
        }
        if (pad) {
            std::fill_n(pad + b * T, P - e.prompt.size(), true);
        }
        // exclusive; next never trains the terminator, the line's last character
        const int64_t answerEnd =
            static_cast<int64_t>(line.size()) - (m_objective == Objective::Next ? 1 : 0);
        line.resize(L, '\n');
        for (int64_t t = 0; t < T; ++t) {
            x[b * T + t] = vocab::encode(line[t]);
        }
        // target t predicts line[t + 1]; the answer occupies line[P, answerEnd)
        for (int64_t t = P - 1; t < answerEnd - 1; ++t) {
            y[b * T + t] = vocab::encode(line[t + 1]);
        }
    }
    return {inputs, targets, padding};
}

std::string BatchSource::rngState() const {
    std::ostringstream out;
    out << m_rng;
    return out.str();
}

void BatchSource::setRngState(const std::string& state) {
    std::istringstream in(state);
    in >> m_rng;
    if (!in) {
        throw std::invalid_argument("batch RNG state is corrupt");
    }
}

}  // namespace nope
