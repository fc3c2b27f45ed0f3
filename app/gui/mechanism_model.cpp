#include "gui/mechanism_model.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "mechanism/averaging_model.h"
#include "model/init.h"
#include "tasks/batch.h"
#include "tasks/dataset.h"

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
    const int promptLength = longestPrompt(spec.task);
    if (promptLength > spec.model.blockSize) {
        throw std::invalid_argument("context: " + std::to_string(spec.model.blockSize) +
                                    " is shorter than the " + taskName(spec.task) +
                                    " prompts (allowed: " + std::to_string(promptLength) +
                                    " or more)");
    }
    const int prompts = std::min(c.samples, spec.train.data.testSize);
    const std::string key = toJson(spec).dump() + "/" + std::to_string(prompts);
    if (!m_cache || m_cache->key != key) {
        const TaskData data = makeTaskData(spec.task, spec.train.data);
        const PromptSet set = makePromptSet(data, std::min(prompts, int(data.test.size())),
                                            analysisPromptSeed(spec.train.data.seed));
        Gpt model = seededModel(spec.model, spec.train.seed);
        auto cache = std::make_unique<Cache>();
        cache->key = key;
        cache->material = modelMaterial(*model, set.tokens);
        m_cache = std::move(cache);
    }
    c.length = promptLength;
    if (c.inputs == AveragingInputs::Tokens) {
        c.dim = spec.model.nEmbd;
    }
    if (c.weights == AveragingWeights::Model) {
        c.causal = spec.model.attention == AttentionKind::Causal;
    }
    return simulateAveraging(c, m_cache->material);
}

}  // namespace nope::gui
