// Runs the ablations of mechanism/ablation.h on a model: for each, the model's attention switched
// (or its inputs drawn), the prompts analysed as analysis/analyzer.h does, and the model's own
// attention restored afterwards, whatever happens.
#pragma once

#include <torch/torch.h>

#include <atomic>

#include "mechanism/ablation.h"
#include "model/gpt.h"

namespace nope {

// The inputs of eqx, randx or constant for N prompts of T tokens, C wide (N, T, C), from `seed`.
// eqx: per prompt, unit vectors at T distinct random coordinates plus 0.1 on every coordinate,
// normalised, times 0.05 (every pair of them equally far apart); needs T <= C.
torch::Tensor drawAblationInputs(Ablation ablation, int64_t N, int64_t T, int64_t C, uint64_t seed);

// Sets a variant of every block's attention for a scope and restores the model's own on exit.
class AttentionVariantScope {
public:
    AttentionVariantScope(GptImpl& model, const AttentionVariant& variant);
    ~AttentionVariantScope();
    AttentionVariantScope(const AttentionVariantScope&) = delete;
    AttentionVariantScope& operator=(const AttentionVariantScope&) = delete;

private:
    GptImpl& m_model;
};

// tokens (N, T) int64. Throws std::invalid_argument with checkAblations' message on bad
// settings. `cancel`, when it becomes true, stops between batches and ablations (the table then
// holds the ablations finished before).
AblationTable runAblations(GptImpl& model, const torch::Tensor& tokens,
                           const AblationConfig& config,
                           const std::vector<std::string>& prompts = {},
                           const std::atomic<bool>* cancel = nullptr);

}  // namespace nope
