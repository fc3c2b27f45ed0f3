// The averaging effect with parts of a real model (mechanism/averaging.h): its token embeddings
// of real prompts as the inputs, or its first layer's attention weights on those prompts as the
// weights. Prompt p's weights are those of head p mod heads; sample n takes prompt n mod the
// prompts.
#pragma once

#include <torch/torch.h>

#include "mechanism/averaging.h"
#include "model/gpt.h"

namespace nope {

struct ModelMaterial {
    torch::Tensor embeddings;  // (N, T, C): wte of the prompts' tokens
    torch::Tensor weights;     // (N, T, T): layer 1's attention weights, prompt p's in head
                               // p mod heads
};

// tokens (N, T) int64: the prompts. Runs the model once, in eval mode, without gradients.
ModelMaterial modelMaterial(GptImpl& model, const torch::Tensor& tokens);

// The simulation with the model's parts where the settings ask for them (weights model, inputs
// tokens); config.length must be the prompts' T, and config.dim the model's width when the
// inputs are its embeddings. Throws std::invalid_argument on a mismatch.
AveragingResult simulateAveraging(const AveragingConfig& config, const ModelMaterial& material);

}  // namespace nope
