// Training and test examples of a task: seeded, unique, and disjoint between the two sets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tasks/task.h"

namespace nope {

// How addition's operand pairs are drawn.
//   balanced  the authors' training set: operand-size buckets (every one-digit pair, 900 pairs
//             of at most two digits, the rest of at most three) whose pairs are accepted only
//             while their carry count (0 to 3) holds fewer than a quarter of the set; the test
//             set is a uniform sample of the pairs not in training.
//   buckets   the operand-size buckets alone, for training and test alike (no carry balance).
enum class AdditionData { Balanced, Buckets };

struct DataConfig {
    int trainSize = 10000;  // unique training examples
    int testSize = 10000;   // unique test examples, none of them in training
    uint64_t seed = 1234;   // the dataset's own seed, separate from the model's
    AdditionData addition = AdditionData::Balanced;  // addition only
};

std::string toString(AdditionData scheme);
std::optional<AdditionData> parseAdditionData(std::string_view s);

// Carries when adding a and b in base 10 (0 to 3 for operands below 1000).
int carryCount(uint64_t a, uint64_t b);

struct TaskData {
    TaskKind task = TaskKind::Addition;
    std::vector<Example> train;
    std::vector<Example> test;
};

// Largest train + test size any task accepts.
inline constexpr int kMaxExamples = 1000000;

// How many distinct examples train and test can hold together for a task: addition has 10^6
// operand pairs (the bucket scheme's quotas reach 991,900); the others are capped by
// kMaxExamples.
int64_t maxExamples(TaskKind task, AdditionData scheme = AdditionData::Balanced);
// The largest training set: for balanced addition four times the rarest carry count's pairs
// (136,125 with three carries), for bucket addition 991,000 (100 + 900 + every three-digit
// pair), else maxExamples less one test example.
int64_t maxTrainExamples(TaskKind task, AdditionData scheme = AdditionData::Balanced);

// Draws the examples. Numbers are uniform over each task's range (reversal [0, 10^16),
// indexing [0, 10^9), ordering [0, 10^5) with distinct digits). Addition draws operand pairs
// by `config.addition` (see AdditionData). Throws std::invalid_argument when a size is outside
// [1, maxTrainExamples] or train and test together exceed maxExamples.
TaskData makeTaskData(TaskKind task, const DataConfig& config);

// n distinct examples drawn without replacement, in draw order (seeded).
std::vector<Example> sampleExamples(const std::vector<Example>& pool, int n, uint64_t seed);

// The prompt left-padded with '\n' to `length` characters (unchanged when already longer).
std::string leftPad(const std::string& prompt, int length);

}  // namespace nope
