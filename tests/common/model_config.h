// A small model's settings for the tests: the shape given, the rest at the defaults.
#pragma once

#include "model/model_config.h"

namespace nope::test {

inline ModelConfig smallModelConfig(int layers, int heads, int dim, int context) {
    ModelConfig m;
    m.nLayer = layers;
    m.nHead = heads;
    m.nEmbd = dim;
    m.blockSize = context;
    return m;
}

}  // namespace nope::test
