// The inputs and targets of position probes, computed from hidden states (N, T, C) in fp32.
#pragma once

#include <torch/torch.h>

#include "probe/probe_config.h"

namespace nope {

// Number of input values of a feature for hidden size `dim` and sequence length `length`.
int64_t probeFeatureSize(ProbeFeature feature, int64_t dim, int64_t length);

// hidden (N, T, C) -> (N, T, F):
//   vector     the hidden vector itself (F = C)
//   variance   its population variance across C (F = 1)
//   norm       its L2 norm (F = 1)
//   cosine     cos(h_p, h_{T-1}) (F = 1)
//   cosine_row row p of the self-cosine matrix, 0 for the future tokens j > p (F = T)
torch::Tensor probeFeature(const torch::Tensor& hidden, ProbeFeature feature);

// The target of every position, (N, T) float: p, or T-1-p for `cosine`.
torch::Tensor probeTargets(int64_t strings, int64_t length, ProbeFeature feature);

}  // namespace nope
