#include "model/init.h"

#include <cmath>
#include <mutex>
#include <string>

namespace nope {

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isLayerNormWeight(const std::string& name) {
    return name.find(".ln_") != std::string::npos;  // ln_1, ln_2 and ln_f
}

}  // namespace

void initializeWeights(GptImpl& model) {
    torch::NoGradGuard noGrad;
    const ModelConfig& config = model.config();
    const bool normal = config.init.scheme == InitScheme::Normal;
    const double projStd = 0.02 / std::sqrt(2.0 * config.nLayer);
    for (auto& item : model.named_parameters()) {
        const std::string& name = item.key();
        torch::Tensor& p = item.value();
        if (endsWith(name, ".bias")) {
            p.zero_();
        } else if (isLayerNormWeight(name)) {
            p.fill_(1.0);
        } else if (normal) {
            p.normal_(config.init.mean, config.init.std);
        } else {
            p.normal_(0.0, endsWith(name, "c_proj.weight") ? projStd : 0.02);
        }
    }
}

Gpt seededModel(const ModelConfig& config, uint64_t seed) {
    static std::mutex building;
    std::lock_guard<std::mutex> lock(building);
    torch::manual_seed(seed);
    Gpt model(config);
    initializeWeights(*model);
    return model;
}

}  // namespace nope
