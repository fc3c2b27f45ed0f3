// The training step split between the threads of one process (Trainer::splitStep).

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "model/dropout.h"
#include "model/fast_ops.h"
#include "model/linear.h"
#include "training/trainer.h"
#include "util/rng.h"

namespace nope {

namespace {

// Rows a share of a split step keeps at least.
constexpr int64_t kMinShareRows = 8;

}  // namespace

int64_t Trainer::stepShares(int64_t rows) {
    return std::clamp<int64_t>(rows / kMinShareRows, 1, at::get_num_threads());
}

// On the CPU with several threads the step runs as data parallelism within the process: the
// batch's rows in one share per thread, each share's forward and backward alone on its core (see
// onEachThread), its mean loss weighted by its share of the target tokens as across processes
// (trainStep), the gradients summed before the optimizer step. Dropout draws per share.
Trainer::StepResult Trainer::splitStep(const Batch& batch, uint64_t dropoutSeed, double lr,
                                       int64_t shares) {
    const int64_t rows = batch.inputs.size(0);
    const std::vector<torch::Tensor> params = m_model->parameters();
    std::vector<Batch> parts(static_cast<size_t>(shares));
    std::vector<double> tokens(static_cast<size_t>(shares));
    double total = 0.0;
    for (int64_t p = 0; p < shares; ++p) {
        const int64_t first = rows * p / shares;
        parts[p] = rowsOf(batch, first, rows * (p + 1) / shares - first);
        tokens[p] = double(targetTokens(parts[p]));
        total += tokens[p];
    }
    if (total == 0.0) {  // no target in the batch: its mean loss is NaN, as in one piece
        m_optimizer->zeroGrad();
        return {std::nan(""), 0.0};
    }
    // the weights' bf16 copies cast once for both shares, not once in each (model/linear.h)
    std::optional<SharedBf16Weights> bf16Weights;
    if (shares > 1 && at::autocast::is_cpu_enabled() &&
        at::autocast::get_autocast_cpu_dtype() == at::kBFloat16 && !emulatingBf16Products()) {
        bf16Weights.emplace(params, shares);
    }
    std::vector<double> losses(static_cast<size_t>(shares), 0.0);
    std::vector<std::vector<torch::Tensor>> grads(static_cast<size_t>(shares));
    onEachThread(shares, [&](int64_t p) {
        if (tokens[p] == 0.0) {
            return;  // nothing to learn from these rows
        }
        DropoutStream dropoutSeeds(deriveSeed(dropoutSeed, uint64_t(p)));
        const torch::Tensor loss = weightedLoss(parts[p], tokens[p] / total);
        losses[p] = loss.item<double>();
        if (std::isfinite(losses[p])) {
            grads[p] = torch::autograd::grad({loss}, params, /*grad_outputs=*/{},
                                             /*retain_graph=*/false, /*create_graph=*/false,
                                             /*allow_unused=*/true);
        }
    });
    double value = 0.0;
    for (double l : losses) {
        value += l;
    }
    if (!std::isfinite(value)) {
        m_optimizer->zeroGrad();
        return {value, 0.0};
    }
    {
        torch::NoGradGuard noGrad;
        for (size_t i = 0; i < params.size(); ++i) {
            torch::Tensor sum;
            for (const auto& share : grads) {
                if (!share.empty() && share[i].defined()) {
                    sum = sum.defined() ? sum + share[i] : share[i];  // (may alias: no add_)
                }
            }
            params[i].mutable_grad() = sum;
        }
    }
    return {value, m_optimizer->step(lr, m_trainConfig.gradClip)};
}

}  // namespace nope
