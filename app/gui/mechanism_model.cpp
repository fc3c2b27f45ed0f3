#include "gui/mechanism_model.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "gui/form_model.h"
#include "mechanism/averaging_model.h"

namespace nope::gui {

struct MechanismModel::Cache {
    std::string key;  // the spec's JSON and the sample count
    ModelMaterial material;
};

MechanismModel::MechanismModel() = default;
MechanismModel::~MechanismModel() = default;

AveragingResult MechanismModel::simulate(const RunSpec& spec, AveragingConfig c) {
    if (!needsModel(c)) {
        return simulateAveraging(c);
    }
    const int prompts = std::min(c.samples, spec.train.data.testSize);
    const std::string key = toJson(spec).dump() + "/" + std::to_string(prompts);
    if (!m_cache || m_cache->key != key) {
        FormModel form = formModelAtInit(spec, prompts);
        auto cache = std::make_unique<Cache>();
        cache->key = key;
        cache->material = modelMaterial(*form.model, form.prompts.tokens);
        m_cache = std::move(cache);
    }
    c.length = longestPrompt(spec.task);
    if (c.inputs == AveragingInputs::Tokens) {
        c.dim = spec.model.nEmbd;
    }
    if (c.weights == AveragingWeights::Model) {
        c.causal = spec.model.attention == AttentionKind::Causal;
    }
    return simulateAveraging(c, m_cache->material);
}

}  // namespace nope::gui
