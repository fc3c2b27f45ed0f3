#include "training/step_profile.h"

#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "training/trainer.h"

namespace nope {

namespace {

bool has(const std::string& s, const char* part) {
    return s.find(part) != std::string::npos;
}

// Sorted largest first, with shares of the step.
std::vector<ProfileShare> shares(const std::map<std::string, double>& us, int steps,
                                 double stepMs) {
    std::vector<ProfileShare> out;
    for (const auto& [name, total] : us) {
        const double ms = total / 1e3 / steps;
        out.push_back({name, ms, stepMs > 0 ? ms / stepMs : 0.0});
    }
    std::sort(out.begin(), out.end(), [](const ProfileShare& a, const ProfileShare& b) {
        return a.msPerStep > b.msPerStep;
    });
    return out;
}

}  // namespace

std::string profileCategory(const std::string& op) {
    if (has(op, "autograd::engine") || has(op, "AccumulateGrad")) {
        return "autograd engine";
    }
    if (has(op, "nope::attention")) {  // products, mask, softmax and dropout together
        return "attention in one pass";
    }
    if (has(op, "nope::linear") || has(op, "batched_matmul") || has(op, "mm") ||
        has(op, "matmul") || has(op, "linear") || has(op, "mkldnn")) {
        return "matrix products";
    }
    if (has(op, "softmax") && !has(op, "log_softmax")) {
        return "attention softmax and mask";
    }
    if (has(op, "masked_fill") || has(op, "triu") || has(op, "tril")) {
        return "attention softmax and mask";
    }
    if (has(op, "layer_norm")) {
        return "LayerNorm";
    }
    if (has(op, "gelu")) {
        return "GELU";
    }
    if (has(op, "dropout") || has(op, "bernoulli")) {
        return "dropout";
    }
    if (has(op, "log_softmax") || has(op, "nll_loss") || has(op, "cross_entropy")) {
        return "loss";
    }
    if (has(op, "adamw") || has(op, "norm") || has(op, "clip")) {
        return "optimizer";
    }
    if (op == "aten::to" || has(op, "_to_copy") || has(op, "copy_") || has(op, "type_as") ||
        has(op, "contiguous") || has(op, "clone") || has(op, "round_bf16")) {
        return "casts and copies";
    }
    if (has(op, "empty") || has(op, "zeros") || has(op, "zero_") || has(op, "fill_") ||
        has(op, "resize_") || has(op, "ones")) {
        return "allocation";
    }
    for (const char* view : {"view", "reshape", "transpose", "permute", "split", "slice", "select",
                             "as_strided", "expand", "aten::t", "unsqueeze", "squeeze", "detach",
                             "alias", "flatten", "narrow", "chunk", "unbind"}) {
        if (has(op, view)) {
            return "views";
        }
    }
    return "other elementwise";
}

StepProfile profileSteps(Trainer& trainer, int steps) {
    return profileCalls(steps, [&trainer] { trainer.stepOnce(); });
}

StepProfile profileCalls(int calls, const std::function<void()>& call) {
    using torch::autograd::profiler::EventKind;
    torch::autograd::profiler::enableProfilerLegacy(
        torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU));
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) {
        call();
    }
    const double wallUs =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    const auto lists = torch::autograd::profiler::disableProfilerLegacy();

    // Per thread, a stack of open ranges: each one's self time is its span less its children's.
    std::map<std::string, double> selfUs;
    double topLevelUs = 0.0;
    for (const auto& events : lists) {
        struct Open {
            const torch::autograd::profiler::LegacyEvent* push;
            double childUs;
        };
        std::vector<Open> stack;
        for (const auto& e : events) {
            if (e.kind() == EventKind::PushRange) {
                stack.push_back({&e, 0.0});
            } else if (e.kind() == EventKind::PopRange && !stack.empty()) {
                auto it = std::find_if(stack.rbegin(), stack.rend(), [&](const Open& o) {
                    return o.push->handle() == e.handle();
                });
                if (it == stack.rend()) {
                    continue;
                }
                const Open open = *it;
                stack.erase(std::next(it).base(), stack.end());
                const double span = open.push->cpuElapsedUs(e);
                selfUs[open.push->name()] += std::max(0.0, span - open.childUs);
                if (stack.empty()) {
                    topLevelUs += span;
                } else {
                    stack.back().childUs += span;
                }
            }
        }
    }
    StepProfile p;
    p.steps = calls;
    p.stepMs = wallUs / 1e3 / calls;
    p.busyMs = std::max(wallUs, topLevelUs) / 1e3 / calls;
    std::map<std::string, double> byCategory;
    for (const auto& [name, us] : selfUs) {
        byCategory[profileCategory(name)] += us;
    }
    byCategory["outside any operator"] += std::max(0.0, wallUs - topLevelUs);
    p.categories = shares(byCategory, calls, p.busyMs);
    p.operators = shares(selfUs, calls, p.busyMs);
    return p;
}

}  // namespace nope
