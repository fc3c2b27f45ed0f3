// Training and test examples of a task: seeded, unique, and disjoint between the two sets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tasks/task.h"

namespace nope {

struct DataConfig {
    int trainSize = 10000;  // unique training examples
    int testSize = 10000;   // unique test examples, none of them in training
    uint64_t seed = 1234;   // the dataset's own seed, separate from the model's
};

struct TaskData {
    TaskKind task = TaskKind::Addition;
    std::vector<Example> train;
    std::vector<Example> test;
};

// Largest train + test size any task accepts.
inline constexpr int kMaxExamples = 1000000;

// How many distinct examples train and test can hold together for a task: addition has 10^6
// operand pairs, of which its bucket quotas reach 991,900; the others are capped by kMaxExamples.
int64_t maxExamples(TaskKind task);

// Draws the examples. Numbers are uniform over each task's range (reversal [0, 10^16),
// indexing [0, 10^9), ordering [0, 10^5) with distinct digits). Addition draws operand pairs
// in three buckets: every one-digit pair (100), then 900 pairs of at most two digits, the rest
// with a three-digit operand; the test set uses the same quotas on what training left.
// Throws std::invalid_argument when a size is outside [1, kMaxExamples] in total.
TaskData makeTaskData(TaskKind task, const DataConfig& config);

// n distinct examples drawn without replacement, in draw order (seeded).
std::vector<Example> sampleExamples(const std::vector<Example>& pool, int n, uint64_t seed);

// The prompt left-padded with '\n' to `length` characters (unchanged when already longer).
std::string leftPad(const std::string& prompt, int length);

}  // namespace nope
