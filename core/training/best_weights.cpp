#include "training/best_weights.h"

#include <cmath>

namespace nope {

bool BestWeights::offer(double accuracy, double testLoss, int step, const GptImpl& model) {
    const double loss =
        std::isfinite(testLoss) ? testLoss : std::numeric_limits<double>::infinity();
    const bool best =
        accuracy > m_record.accuracy || (accuracy == m_record.accuracy && loss < m_record.loss);
    if (best) {
        m_record = {accuracy, loss, step};
        m_weights = copyOf(model);
    }
    return best;
}

void BestWeights::loadFrom(const GptImpl& model, const torch::Device& device) {
    m_weights.clear();
    for (const auto& p : model.parameters()) {
        m_weights.push_back(p.detach().to(device).clone());
    }
}

void BestWeights::copyInto(GptImpl& model) const {
    if (hasWeights()) {
        write(model, m_weights);
    }
}

std::vector<torch::Tensor> BestWeights::copyOf(const GptImpl& model) {
    std::vector<torch::Tensor> copies;
    for (const auto& p : model.parameters()) {
        copies.push_back(p.detach().clone());
    }
    return copies;
}

void BestWeights::write(GptImpl& model, const std::vector<torch::Tensor>& weights) {
    torch::NoGradGuard noGrad;
    auto params = model.parameters();
    TORCH_CHECK(params.size() == weights.size(), "best weights: ", weights.size(),
                " tensors for a model of ", params.size());
    for (size_t i = 0; i < params.size(); ++i) {
        params[i].copy_(weights[i]);
    }
}

}  // namespace nope
