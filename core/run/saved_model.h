// Any saved model, loaded for analysis: NoPEScope's own checkpoint.pt / best.pt (LibTorch
// archives) and weights.pt, a run folder, and nanoGPT-style files written by PyTorch's torch.save
// (nanoGPT's ckpt.pt with `model` and `model_args`, or a plain state dict with nanoGPT's names).
// The model config comes from the file where it has one; otherwise it is read off the tensor
// shapes, except the number of heads, which the caller gives.
// Not here: resuming training (training/checkpoint.h), writing files.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "model/gpt.h"

namespace nope {

struct SavedModelOptions {
    int heads = 0;  // attention heads when the file cannot tell (a plain state dict); 0: not given
};

struct SavedModel {
    Gpt model{nullptr};  // built from the file's config, weights loaded, in eval mode
    ModelConfig config;  // n_layer, n_head, n_embd, block_size, bias, positional
    std::string format;  // nopescope-checkpoint, nopescope-weights, nanogpt-ckpt, state-dict
    std::filesystem::path file;  // the file read (a run folder: its best.pt, else checkpoint.pt)
    // The optimizer steps the weights were trained for: a checkpoint's step, nanoGPT's iter_num,
    // the step of the best.pt beside a weights.pt; -1 when the file does not say.
    int step = -1;
    // The task the model was trained on (a checkpoint's, or the config.json beside the file);
    // empty when the file does not say.
    std::string task;

    nlohmann::json describe() const;  // {"file", "format", "model", "step", "task"}
};

// The file a path names: the path itself, or a run folder's best.pt, else its checkpoint.pt.
// Throws std::runtime_error naming the path when there is none.
std::filesystem::path savedModelFile(const std::filesystem::path& path);

// Throws std::runtime_error that begins with the file's path and names the problem: unreadable
// file, no head count, a vocabulary other than the tasks' 96 characters, an unknown or missing
// weight, a shape mismatch (naming the key and both shapes).
SavedModel loadSavedModel(const std::filesystem::path& path, const SavedModelOptions& options = {});

}  // namespace nope
