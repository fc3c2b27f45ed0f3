// The form's model at initialization on its task's test prompts, for the Mechanism tab's
// ablations and simulation: drawn from the run's settings as a training run draws them (the
// seeded init, the snapshots' prompts).
#pragma once

#include "model/gpt.h"
#include "run/run_spec.h"
#include "tasks/batch.h"

namespace nope::gui {

struct FormModel {
    Gpt model{nullptr};
    PromptSet prompts;  // up to `samples` test prompts, padded to the task's longest
};

// Throws std::invalid_argument naming the context when the task's prompts do not fit in it.
FormModel formModelAtInit(const RunSpec& spec, int samples);

}  // namespace nope::gui
