#include "util/memory.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tasks/task.h"

namespace nope {

namespace {

// A number from a cgroup v2 file ("max" or unreadable: nothing).
std::optional<double> cgroupValue(const char* path) {
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text == "max") {
        return std::nullopt;
    }
    try {
        return std::stod(text);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace

MemoryEstimate trainingMemory(const ModelConfig& m, int batch, int tokens, bool bf16,
                              bool maskedPadding) {
    const double params = static_cast<double>(parameterCount(m));
    MemoryEstimate e;
    e.weights = 4.0 * params;
    e.gradients = 4.0 * params;
    e.optimizer = 8.0 * params;
    // values kept per token and layer (half of the 34 x width + 5 x heads x tokens bytes that
    // Korthikanti et al. count at 16 bits)
    double perToken = 17.0 * m.nEmbd + 2.5 * m.nHead * tokens;
    double bytes = bf16 ? 3.0 : 4.0;
    if (maskedPadding) {
        // Measured (peak resident memory of `train --task reversal --preset paper --batch 1024
        // --steps 2`, 6 x 384, 38 tokens, AMD EPYC Zen 3): fp32 8.49 GB, bf16 7.43 GB, where
        // the count above gives 6.7 and 5.0. The masked attention's scores, mask, softmax and
        // dropout, about 6 x heads x tokens values more, all in fp32 whatever the precision.
        perToken += 6.0 * m.nHead * tokens;
        bytes = 4.0;
    }
    const double logits = 3.0 * m.vocabSize;  // logits, their softmax and its gradient
    e.activations = double(batch) * tokens * (m.nLayer * perToken + logits) * bytes;
    return e;
}

MemoryEstimate analysisMemory(const ModelConfig& m, int batch, int tokens) {
    MemoryEstimate e;
    e.weights = 4.0 * static_cast<double>(parameterCount(m));
    // every capture site's states, and one layer's working set (MLP, attention scores)
    const double perToken = (4.0 * m.nLayer + 1.0) * m.nEmbd + 8.0 * m.nEmbd + m.nHead * tokens;
    e.activations = 4.0 * batch * tokens * perToken;
    return e;
}

std::optional<double> availableMemory() {
    std::optional<double> available;
    std::ifstream meminfo("/proc/meminfo");
    std::string line;
    while (std::getline(meminfo, line)) {
        if (line.rfind("MemAvailable:", 0) == 0) {
            std::istringstream fields(line.substr(13));
            double kb = 0.0;
            if (fields >> kb) {
                available = kb * 1024.0;
            }
        }
    }
    const auto limit = cgroupValue("/sys/fs/cgroup/memory.max");
    const auto used = cgroupValue("/sys/fs/cgroup/memory.current");
    if (limit && used) {
        const double left = *limit - *used;
        available = available ? std::min(*available, left) : left;
    }
    return available;
}

int trainingTokens(const RunSpec& spec) {
    return spec.train.objective == Objective::Lm
               ? spec.train.windowLength
               : longestPrompt(spec.task) + answerBudget(spec.task) - 1;
}

TrainingPlan trainingPlan(const RunSpec& spec) {
    TrainingPlan plan;
    const int batch = spec.train.batchSize;
    auto need = [&](int parts) {
        const int rows = (batch + parts - 1) / parts;
        return trainingMemory(spec.model, rows, trainingTokens(spec),
                              spec.train.precision == Precision::Bf16,
                              masksPadding(spec.train.objective));
    };
    if (spec.train.device == DeviceKind::Cpu) {  // a GPU's memory is not the host's
        plan.available = availableMemory();
    }
    plan.microBatches = std::clamp(spec.train.microBatches, 0, std::max(1, batch));
    if (plan.microBatches == 0) {
        plan.microBatches = 1;
        if (plan.available) {
            // the fewest parts that fit; each count of rows once (parts giving the same rows)
            while (plan.microBatches < batch &&
                   need(plan.microBatches).total() > kMemoryAim * *plan.available) {
                const int rows = (batch + plan.microBatches - 1) / plan.microBatches;
                plan.microBatches = (batch + rows - 2) / (rows - 1);
            }
        }
    }
    plan.rows = (batch + plan.microBatches - 1) / plan.microBatches;
    plan.memory = need(plan.microBatches);
    return plan;
}

std::optional<FieldError> trainingMemoryError(const RunSpec& spec) {
    const TrainingPlan plan = trainingPlan(spec);
    if (!plan.available) {
        return std::nullopt;
    }
    const std::string problem = memoryProblem(plan.memory, *plan.available, "to train");
    if (problem.empty()) {
        return std::nullopt;
    }
    return FieldError{"dim",
                      problem +
                          (plan.rows > 1 ? " with " + std::to_string(plan.rows) + " rows at a time"
                                         : std::string(" with one row at a time")) +
                          " (allowed: a model that fits: fewer {layers}, a smaller "
                          "{dim} or {window}, or more {micro-batches})"};
}

std::string analysisMemoryProblem(const ModelConfig& model, int tokens) {
    const auto available = availableMemory();
    if (!available) {
        return {};
    }
    const std::string problem =
        memoryProblem(analysisMemory(model, 128, tokens), *available, "to analyse");
    return problem.empty() ? problem
                           : "--dim: " + problem +
                                 " (allowed: a model that fits: fewer --layers, a smaller --dim)";
}

std::string bytesText(double bytes) {
    char text[32];
    if (bytes >= 1e9) {
        std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
    } else {
        std::snprintf(text, sizeof text, "%.0f MB", bytes / 1e6);
    }
    return text;
}

std::string memoryProblem(const MemoryEstimate& need, double available, const std::string& what) {
    if (need.total() <= available) {
        return {};
    }
    std::string parts = "weights " + bytesText(need.weights);
    if (need.gradients > 0.0) {
        parts += ", gradients " + bytesText(need.gradients);
    }
    if (need.optimizer > 0.0) {
        parts += ", optimizer state " + bytesText(need.optimizer);
    }
    parts += ", activations " + bytesText(need.activations);
    return "the model needs about " + bytesText(need.total()) + " " + what + " (" + parts +
           ") and this machine has " + bytesText(available) + " available";
}

}  // namespace nope
