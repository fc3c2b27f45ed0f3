#include "gui/form_model.h"

#include <algorithm>
#include <stdexcept>

#include "model/init.h"
#include "tasks/dataset.h"

namespace nope::gui {

FormModel formModelAtInit(const RunSpec& spec, int samples) {
    const int promptLength = longestPrompt(spec.task);
    if (promptLength > spec.model.blockSize) {
        throw std::invalid_argument("context: " + std::to_string(spec.model.blockSize) +
                                    " is shorter than the " + taskName(spec.task) +
                                    " prompts (allowed: " + std::to_string(promptLength) +
                                    " or more)");
    }
    const TaskData data = makeTaskData(spec.task, spec.train.data);
    FormModel out;
    out.prompts = makePromptSet(data, std::min(samples, static_cast<int>(data.test.size())),
                                analysisPromptSeed(spec.train.data.seed));
    out.model = seededModel(spec.model, spec.train.seed);
    return out;
}

}  // namespace nope::gui
