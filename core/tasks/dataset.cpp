#include "tasks/dataset.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <unordered_set>

#include "util/rng.h"

namespace nope {

namespace {

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

std::string additionAnswer(uint64_t a, uint64_t b) {
    std::string sum = std::to_string(a + b);
    std::reverse(sum.begin(), sum.end());
    return sum + "$";
}

std::string additionPrompt(uint64_t a, uint64_t b) {
    return "$" + std::to_string(a) + "+" + std::to_string(b) + "=";
}

// Addition operand pairs by the digit count of the larger operand.
constexpr std::array<uint64_t, 3> kBucketLimit = {10, 100, 1000};  // operands below this
constexpr std::array<int, 2> kBucketQuota = {100, 900};            // the third takes the rest

uint64_t bucketPoolSize(int bucket) {
    const uint64_t hi = kBucketLimit[bucket] * kBucketLimit[bucket];
    const uint64_t lo = bucket == 0 ? 0 : kBucketLimit[bucket - 1] * kBucketLimit[bucket - 1];
    return hi - lo;
}

void drawAddition(std::vector<Example>& out, int count, Rng& rng, UniqueDraw& draw,
                  std::array<uint64_t, 3>& used) {
    int remaining = count;
    for (int bucket = 0; bucket < 3 && remaining > 0; ++bucket) {
        const uint64_t available = bucketPoolSize(bucket) - used[bucket];
        uint64_t quota = bucket < 2 ? std::min<uint64_t>(kBucketQuota[bucket], remaining)
                                    : static_cast<uint64_t>(remaining);
        quota = std::min(quota, available);
        const uint64_t limit = kBucketLimit[bucket];
        const uint64_t below = bucket == 0 ? 0 : kBucketLimit[bucket - 1];
        uint64_t got = 0;
        while (got < quota) {
            const uint64_t a = uniformInt(rng, 0, limit - 1);
            const uint64_t b = uniformInt(rng, 0, limit - 1);
            if (std::max(a, b) < below) {
                continue;  // belongs to a smaller bucket
            }
            if (draw.add(out, additionPrompt(a, b), additionAnswer(a, b))) {
                ++got;
            }
        }
        used[bucket] += got;
        remaining -= static_cast<int>(got);
    }
    if (remaining > 0) {
        throw std::invalid_argument("addition has no more unique operand pairs");
    }
}

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
    if (config.trainSize < 1 || config.testSize < 1 ||
        config.trainSize > kMaxExamples - config.testSize) {
        throw std::invalid_argument(
            "train and test sizes must each be at least 1 and together at most " +
            std::to_string(kMaxExamples));
    }
    TaskData data;
    data.task = task;
    data.train.reserve(config.trainSize);
    data.test.reserve(config.testSize);
    std::unordered_set<std::string> taken;
    taken.reserve(static_cast<size_t>(config.trainSize + config.testSize) * 2);
    UniqueDraw draw(taken);
    Rng rng(deriveSeed(config.seed, static_cast<uint64_t>(task)));
    if (task == TaskKind::Addition) {
        std::array<uint64_t, 3> used = {0, 0, 0};
        drawAddition(data.train, config.trainSize, rng, draw, used);
        drawAddition(data.test, config.testSize, rng, draw, used);
        shuffleInPlace(data.train, rng);  // buckets were drawn in order
        shuffleInPlace(data.test, rng);
    } else {
        drawUniform(task, data.train, config.trainSize, rng, draw);
        drawUniform(task, data.test, config.testSize, rng, draw);
    }
    return data;
}

int64_t maxExamples(TaskKind task) {
    if (task == TaskKind::Addition) {
        // every one-digit pair, 900 two-digit pairs per set, every three-digit pair
        return bucketPoolSize(0) + 2 * kBucketQuota[1] + bucketPoolSize(2);
    }
    return kMaxExamples;
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
