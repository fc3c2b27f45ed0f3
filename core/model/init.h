// Weight initialization schemes of the study, drawn from LibTorch's global generator (seed it
// with torch::manual_seed first for a reproducible model).
//   default  nanoGPT's: every Linear and Embedding weight ~ N(0, 0.02), both c_proj weights
//            ~ N(0, 0.02 / sqrt(2 * n_layer)), biases 0, LayerNorm weights 1.
//   normal   every weight that is not a LayerNorm weight (wte, wpe, c_attn, both c_proj, c_fc)
//            ~ N(mean, std); biases 0, LayerNorm weights 1.
#pragma once

#include "model/gpt.h"

namespace nope {

void initializeWeights(GptImpl& model);

// A model at initialization from `seed`: torch::manual_seed(seed), construction, then
// initializeWeights, all on the global generator, as every command and the trainer build one.
// Serialised with every other call: two threads building seeded models at once would interleave
// their draws. (It re-seeds the global generator, which a training run's dropout draws from: the
// window builds none while a run is going.)
Gpt seededModel(const ModelConfig& config, uint64_t seed);

}  // namespace nope
