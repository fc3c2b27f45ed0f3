// Names a stretch of the project's own code (its kernels, the optimizer) for LibTorch's profiler,
// as LibTorch names its operators, so that `bench --profile` can place its time. Costs a check of
// a thread-local flag when no profiler runs.
#pragma once

#include <ATen/record_function.h>

#define NOPE_PROFILE_SCOPE(name) RECORD_FUNCTION(name, c10::ArrayRef<const c10::IValue>{})
