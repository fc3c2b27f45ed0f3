// Token tensors from task text: the bridge between the string world of tasks/ and LibTorch.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "tasks/dataset.h"

namespace nope {

// Equal-length texts -> (N, T) int64 token ids. Throws std::invalid_argument on unequal lengths.
torch::Tensor encodeBatch(const std::vector<std::string>& texts);

// Analysis prompts: `samples` test prompts drawn with `seed`, left-padded with '\n' to the task's
// longest prompt, and their tokens.
struct PromptSet {
    std::vector<Example> examples;    // as drawn, unpadded
    std::vector<std::string> padded;  // each longestPrompt(task) characters
    torch::Tensor tokens;             // (samples, longestPrompt(task)) int64
};
PromptSet makePromptSet(const TaskData& data, int samples, uint64_t seed);

// A user's own prompts, left-padded with '\n' to `length` (at least the longest of them). Throws
// std::invalid_argument naming the prompt and its characters outside the vocabulary.
PromptSet makePromptSet(const std::vector<std::string>& prompts, int length);

// The seed of the analysis prompt draw, derived from the data seed: analyze and train draw the
// same prompts for the same data seed and sample count.
uint64_t analysisPromptSeed(uint64_t dataSeed);

}  // namespace nope
