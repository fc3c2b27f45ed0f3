// The training step split between the threads of one process (Trainer::splitPart).

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

// On the CPU with several threads a part of the step runs as data parallelism within the
// process: its rows in one share per thread, each share's forward and backward alone on its core
// (see onEachThread), its mean loss weighted by its share of the step's target tokens as across
// processes (trainStep), the shares' gradients summed into the parameters'. Each share's dropout
// is keyed by its rows' place in the batch, so the split drops what one piece would.
double Trainer::splitPart(const Batch& part, int64_t firstRow, uint64_t dropoutSeed, double weight,
                          int64_t shares) {
    const int64_t rows = part.inputs.size(0);
    const std::vector<torch::Tensor> params = m_model->parameters();
    std::vector<Batch> pieces(static_cast<size_t>(shares));
    std::vector<int64_t> firsts(static_cast<size_t>(shares));
    std::vector<double> tokens(static_cast<size_t>(shares));
    double total = 0.0;
    for (int64_t p = 0; p < shares; ++p) {
        firsts[p] = rows * p / shares;
        pieces[p] = rowsOf(part, firsts[p], rows * (p + 1) / shares - firsts[p]);
        tokens[p] = double(targetTokens(pieces[p]));
        total += tokens[p];
    }
    if (total == 0.0) {  // no target in the part: it adds nothing
        return 0.0;
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
        DropoutStream dropoutSeeds(dropoutSeed, firstRow + firsts[p]);
        const torch::Tensor loss = weightedLoss(pieces[p], weight * tokens[p] / total);
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
        return value;
    }
    torch::NoGradGuard noGrad;
    for (size_t i = 0; i < params.size(); ++i) {
        torch::Tensor sum = params[i].grad();  // the step's earlier parts (undefined: none)
        for (const auto& share : grads) {
            if (!share.empty() && share[i].defined()) {
                sum = sum.defined() ? sum + share[i] : share[i];  // (may alias: no add_)
            }
        }
        params[i].mutable_grad() = sum;
    }
    return value;
}

}  // namespace nope
