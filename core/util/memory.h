// How much memory a model needs, estimated before anything is allocated, and how much the
// machine has: a model too large is refused with both figures instead of failing half-way
// through LibTorch's allocations. No LibTorch here (the form checks it as you type).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/model_config.h"
#include "run/run_spec.h"
#include "util/field_error.h"

namespace nope {

struct MemoryEstimate {
    double weights = 0.0;      // bytes, float32
    double gradients = 0.0;    // training only
    double optimizer = 0.0;    // AdamW's two moments, training only
    double activations = 0.0;  // what the forward pass keeps (for the backward pass)
    double total() const { return weights + gradients + optimizer + activations; }
};

// Training at `batch` sequences of `tokens`: weights, gradients, AdamW's moments and the
// activations kept for the backward pass (per layer and token about 34 x width plus 5 x heads x
// tokens values, 4 bytes each in fp32, about 3 in bf16 where the products' copies are bf16).
// `maskedPadding`: the rows' padding is masked out of attention (the masked and next
// objectives), whose attention keeps its scores, mask and softmax in fp32 besides.
MemoryEstimate trainingMemory(const ModelConfig& model, int batch, int tokens, bool bf16,
                              bool maskedPadding = false);
// Analysis: the weights and one forward pass of `batch` sequences with every hidden state kept.
MemoryEstimate analysisMemory(const ModelConfig& model, int batch, int tokens);

// The memory this process may still use: MemAvailable of /proc/meminfo, or less when a cgroup
// limit (memory.max) leaves less; nullopt when neither can be read.
std::optional<double> availableMemory();

// The sequences a training step of `spec` processes: the lm window, or the answer objective's
// padded prompt and answer.
int trainingTokens(const RunSpec& spec);

// How a training step of `spec` runs on this machine: the batch in `microBatches` parts of at
// most `rows` rows (util/memory.cpp: spec's {micro-batches} when set, otherwise the fewest whose
// estimate fits in 85% of the available memory), and the memory one of them needs.
struct TrainingPlan {
    int microBatches = 1;
    int rows = 0;  // rows of the largest micro-batch
    MemoryEstimate memory;
    std::optional<double> available;  // what the machine has (unknown: nullopt)
    bool fits() const { return !available || memory.total() <= *available; }
};
TrainingPlan trainingPlan(const RunSpec& spec);
// The share of the available memory an automatic micro-batch count aims to fill: the estimates
// are within about 10% of measured peaks, and the rest of the machine goes on.
inline constexpr double kMemoryAim = 0.85;

// The problem of training `spec` on this machine (its plan's micro-batch), as an error of the
// setting `dim` naming the settings to lower; nothing when it fits, runs on a GPU, or the
// available memory is unknown.
std::optional<FieldError> trainingMemoryError(const RunSpec& spec);
// The same for analysing (or probing) `model` on sequences of `tokens`.
std::string analysisMemoryProblem(const ModelConfig& model, int tokens);

// "38.2 GB", "512 MB"
std::string bytesText(double bytes);

// When `need` does not fit in `available`: "the model needs about 153 GB to train (weights
// 38.3 GB, gradients 38.3 GB, optimizer state 76.6 GB, activations 0.4 GB) and this machine has
// 21.5 GB available"; empty when it fits. `what` is "to train" or "to analyse".
std::string memoryProblem(const MemoryEstimate& need, double available, const std::string& what);

}  // namespace nope
