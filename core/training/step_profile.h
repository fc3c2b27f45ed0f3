// Where a training step's (or an analysis snapshot's) time goes: LibTorch's profiler around a few
// calls, each operator's self time (its own, without the operators it calls) summed per category,
// and the time outside any operator. For `nopescope-cli bench --profile` and docs/performance.md.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace nope {

class Trainer;

struct ProfileShare {
    std::string name;
    double msPerStep = 0.0;  // per call: a training step, or whatever was profiled
    double share = 0.0;      // of the call's wall time
};

struct StepProfile {
    int steps = 0;        // calls profiled
    double stepMs = 0.0;  // wall time per call, under the profiler
    // the categories' sum per call: the wall time, or more where several threads ran operators
    // side by side (their self times add up; shares are of this sum)
    double busyMs = 0.0;
    std::vector<ProfileShare> categories;  // largest first; "outside any operator" included
    std::vector<ProfileShare> operators;   // by self time, largest first
};

// The category of an operator's name: "matrix products", "attention in one pass" (the fused
// kernel of model/fused_attention.h), "attention softmax and mask",
// "LayerNorm", "GELU", "dropout", "casts", "loss", "optimizer", "allocation", "views",
// "autograd engine" or "other elementwise".
std::string profileCategory(const std::string& op);

// Runs `call` `calls` times under the profiler (after the caller's warm-up).
StepProfile profileCalls(int calls, const std::function<void()>& call);

// Runs `steps` training steps of `trainer` under the profiler (after the caller's warm-up).
StepProfile profileSteps(Trainer& trainer, int steps);

}  // namespace nope
