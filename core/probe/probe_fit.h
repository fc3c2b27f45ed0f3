// Trains many position probes at once: every probe of one feature (one per capture point and
// layer, and a control of each on shuffled targets) as one batched network whose Linear layers
// are batched matrix products (K, rows, in) x (K, in, out). Each probe has its own weights,
// initialization and AdamW state, exactly as if trained alone; they share the batch order.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <vector>

#include "probe/probe_config.h"

namespace nope {

struct ProbeFitInput {
    torch::Tensor trainX;  // (P, N_train, T, F) float: P probes' inputs
    torch::Tensor trainY;  // (N_train, T) float targets, shared by the P probes
    torch::Tensor testX;   // (P, N_test, T, F)
    torch::Tensor testY;   // (N_test, T)
};

struct ProbeFit {
    double pearsonR = 0;
    double nrmse = 0;
    double controlR = 0;  // NaN without controls
    double controlNrmse = 0;
    double trainLoss = 0;          // last epoch's mean training MSE
    std::vector<float> truth;      // test targets of the first keepPredictions strings
    std::vector<float> predicted;  // the probe's predictions for them
};

struct ProbeFitHooks {
    const std::atomic<bool>* cancel = nullptr;  // checked between epochs
    std::function<void(int epochsDone)> onEpoch;
};

// One fit per input probe p, or an empty vector when cancelled. Uses `seed` (not LibTorch's
// global generator) for the weights, the batch order and the control's shuffle.
std::vector<ProbeFit> fitProbes(const ProbeFitInput& input, const ProbeConfig& config,
                                uint64_t seed, const ProbeFitHooks& hooks = {});

}  // namespace nope
