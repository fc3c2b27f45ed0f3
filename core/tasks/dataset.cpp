#include "tasks/dataset.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <unordered_set>

#include "tasks/addition_data.h"
#include "util/enum_names.h"
#include "util/rng.h"

namespace nope {

namespace {

constexpr EnumName<AdditionData> kAdditionData[] = {{AdditionData::Balanced, "balanced"},
                                                    {AdditionData::Buckets, "buckets"}};

// Collects unique examples; `taken` holds every prompt already used by either set.
class UniqueDraw {
public:
    explicit UniqueDraw(std::unordered_set<std::string>& taken) : m_taken(taken) {}
    bool add(std::vector<Example>& out, const std::string& prompt, const std::string& answer) {
        if (!m_taken.insert(prompt).second) {
            return false;
        }
        out.push_back({prompt, answer});
        return true;
    }

private:
    std::unordered_set<std::string>& m_taken;
};

std::string drawReversal(Rng& rng, std::string& answer) {
    const std::string n = std::to_string(uniformInt(rng, 0, 9999999999999999ULL));
    answer.assign(n.rbegin(), n.rend());
    return "rev(" + n + ")=";
}

std::string drawIndexing(Rng& rng, std::string& answer) {
    const std::string n = std::to_string(uniformInt(rng, 0, 999999999ULL));
    const char digit = n[uniformInt(rng, 0, n.size() - 1)];  // a digit at a random position
    answer = std::to_string(n.find(digit));
    return "wherex(" + n + "," + std::string(1, digit) + ")=";
}

std::string drawOrdering(Rng& rng, std::string& answer) {
    std::string n;
    for (;;) {
        n = std::to_string(uniformInt(rng, 0, 99999));
        std::string sorted = n;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) {
            break;  // distinct digits
        }
    }
    std::vector<char> shuffled(n.begin(), n.end());
    shuffleInPlace(shuffled, rng);
    answer.clear();
    for (char c : shuffled) {
        answer += std::to_string(n.find(c));
    }
    return "order(" + n + "," + std::string(shuffled.begin(), shuffled.end()) + ")=";
}

void drawUniform(TaskKind task, std::vector<Example>& out, int count, Rng& rng, UniqueDraw& draw) {
    std::string answer;
    int got = 0;
    while (got < count) {
        std::string prompt;
        switch (task) {
            case TaskKind::Reversal:
                prompt = drawReversal(rng, answer);
                break;
            case TaskKind::Indexing:
                prompt = drawIndexing(rng, answer);
                break;
            case TaskKind::Ordering:
                prompt = drawOrdering(rng, answer);
                break;
            case TaskKind::Addition:
                throw std::logic_error("addition draws by bucket");
        }
        if (draw.add(out, prompt, answer)) {
            ++got;
        }
    }
}

}  // namespace

TaskData makeTaskData(TaskKind task, const DataConfig& config) {
    const int64_t most = maxExamples(task, config.addition);
    if (config.trainSize < 1 || config.testSize < 1 ||
        config.trainSize > maxTrainExamples(task, config.addition) ||
        int64_t{config.trainSize} + config.testSize > most) {
        throw std::invalid_argument(
            "train and test sizes must each be at least 1, training at most " +
            std::to_string(maxTrainExamples(task, config.addition)) + " and together at most " +
            std::to_string(most));
    }
    TaskData data;
    data.task = task;
    data.train.reserve(config.trainSize);
    data.test.reserve(config.testSize);
    std::unordered_set<std::string> taken;
    UniqueDraw draw(taken);
    Rng rng(deriveSeed(config.seed, static_cast<uint64_t>(task)));
    if (task == TaskKind::Addition) {
        const AdditionPairs pairs =
            config.addition == AdditionData::Balanced
                ? drawBalancedAddition(config.trainSize, config.testSize, rng)
                : drawBucketAddition(config.trainSize, config.testSize, rng);
        for (uint32_t pair : pairs.train) {
            data.train.push_back(additionExample(pair));
        }
        for (uint32_t pair : pairs.test) {
            data.test.push_back(additionExample(pair));
        }
        shuffleInPlace(data.train, rng);  // buckets were drawn in order
        shuffleInPlace(data.test, rng);
    } else {
        taken.reserve(static_cast<size_t>(config.trainSize + config.testSize) * 2);
        drawUniform(task, data.train, config.trainSize, rng, draw);
        drawUniform(task, data.test, config.testSize, rng, draw);
    }
    return data;
}

int64_t maxExamples(TaskKind task, AdditionData scheme) {
    if (task != TaskKind::Addition) {
        return kMaxExamples;
    }
    // buckets: every one-digit pair, 900 two-digit pairs per set, every three-digit pair
    return scheme == AdditionData::Balanced ? kAdditionPairs : 100 + 2 * 900 + 990000;
}

int64_t maxTrainExamples(TaskKind task, AdditionData scheme) {
    if (task == TaskKind::Addition) {
        // balanced: four times the rarest carry count; buckets: the training quotas of the
        // one- and two-digit buckets and every three-digit pair
        return scheme == AdditionData::Balanced
                   ? 4 * *std::min_element(pairsPerCarryCount().begin(), pairsPerCarryCount().end())
                   : 100 + 900 + 990000;
    }
    return maxExamples(task, scheme) - 1;
}

int carryCount(uint64_t a, uint64_t b) {
    int carries = 0;
    int carry = 0;
    while (a > 0 || b > 0) {
        carry = (a % 10 + b % 10 + carry) >= 10 ? 1 : 0;
        carries += carry;
        a /= 10;
        b /= 10;
    }
    return carries;
}

std::string toString(AdditionData scheme) {
    return nameOf(kAdditionData, scheme);
}

std::optional<AdditionData> parseAdditionData(std::string_view s) {
    return parseName(kAdditionData, s);
}

std::vector<Example> sampleExamples(const std::vector<Example>& pool, int n, uint64_t seed) {
    if (n < 1 || static_cast<size_t>(n) > pool.size()) {
        throw std::invalid_argument("cannot draw " + std::to_string(n) + " of " +
                                    std::to_string(pool.size()) + " examples");
    }
    std::vector<size_t> index(pool.size());
    for (size_t i = 0; i < index.size(); ++i) {
        index[i] = i;
    }
    Rng rng(seed);
    // Partial Fisher-Yates: the first n slots end up a uniform sample without replacement.
    for (int i = 0; i < n; ++i) {
        std::swap(index[i], index[uniformInt(rng, i, index.size() - 1)]);
    }
    std::vector<Example> out;
    out.reserve(n);
    for (int i = 0; i < n; ++i) {
        out.push_back(pool[index[i]]);
    }
    return out;
}

std::string leftPad(const std::string& prompt, int length) {
    if (static_cast<int>(prompt.size()) >= length) {
        return prompt;
    }
    return std::string(length - prompt.size(), '\n') + prompt;
}

}  // namespace nope
