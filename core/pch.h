// Precompiled header of every target that uses LibTorch: <torch/torch.h> alone costs 20-30 s of
// compile time per file, parsed once here instead.
#pragma once

#include <torch/torch.h>
