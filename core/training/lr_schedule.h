// The learning rate at each step: linear warm-up from 0, then cosine decay to a fraction of the
// peak, then constant (nanoGPT's schedule with the authors' settings).
#pragma once

#include "training/train_config.h"

namespace nope {

// `step` counts from 0 (the first optimizer step).
double learningRateAt(int step, const TrainConfig& config);

}  // namespace nope
