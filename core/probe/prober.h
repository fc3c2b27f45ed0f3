// Runs the position probes of a ProbeConfig on a model: draws the probe strings (or takes task
// prompts), captures the hidden states of every chosen capture point and layer in fp32 eval mode,
// and fits one probe per point, layer and feature (see probe_fit.h), with controls.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "model/gpt.h"
#include "probe/probe_result.h"

namespace nope {

// The token sequences a probe trains and tests on, each (N, T) int64.
struct ProbeTokens {
    torch::Tensor train;
    torch::Tensor test;
};

// Random strings of config.length characters: train over config.trainChars, test over
// config.testChars, drawn from `config.seed`.
ProbeTokens randomProbeTokens(const ProbeConfig& config);

// The task's own prompts (already padded to one length, e.g. a PromptSet's tokens): the first
// config.trainStrings rows train, the next config.testStrings test. Throws
// std::invalid_argument when there are too few.
ProbeTokens taskProbeTokens(const ProbeConfig& config, const torch::Tensor& promptTokens);

struct ProbeRunHooks {
    const std::atomic<bool>* cancel = nullptr;  // checked between epochs and between groups
    // Called after every epoch of every group: done and total epochs of the whole run.
    std::function<void(int done, int total)> progress;
};

// Probes of every point, layer and feature of `config` on `model` (restored to its mode after).
ProbeReport runProbes(GptImpl& model, const ProbeConfig& config, const ProbeTokens& tokens,
                      const ProbeRunHooks& hooks = {});

}  // namespace nope
