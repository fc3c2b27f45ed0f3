// The form's model at init for the Mechanism tab's simulation: its first layer's attention
// weights and its token embeddings of the task's test prompts (mechanism/averaging_model.h),
// built when the settings need them and kept until the form's model or the sample count change.
#pragma once

#include <memory>

#include "mechanism/averaging.h"
#include "run/run_spec.h"

namespace nope::gui {

class MechanismModel {
public:
    MechanismModel();
    ~MechanismModel();

    // The simulation of `config`, with the parts of `spec`'s model at init where the settings ask
    // for them (the prompts then set the length, the model's width the dimension of the
    // embeddings, its attention whether the weights are causal). Throws std::exception with a
    // message naming the setting on a model or task that cannot be used.
    AveragingResult simulate(const RunSpec& spec, AveragingConfig config);

private:
    struct Cache;
    std::unique_ptr<Cache> m_cache;
};

}  // namespace nope::gui
