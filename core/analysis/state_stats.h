// Statistics of captured hidden states for the analysis (analyzer.cpp): per vector its norm and
// variance in one pass, finiteness, and the self-cosine matrices from them.
#pragma once

#include <torch/torch.h>

namespace nope {

// Per vector of float states (..., D), in one pass over them: its norm and population variance
// (summed in double), and over all of them whether every value is finite and whether the
// cosines can come from the Gram product as it is (every norm 0 or within [1e-15, 1e15], so
// that float32's products neither overflow nor vanish).
struct VectorStats {
    torch::Tensor norms, variances;  // (...) float
    bool finite = true;
    bool gramSafe = true;
};

VectorStats vectorStats(const torch::Tensor& h);

// Whether every value of contiguous float states is finite: no value has the exponent bits all
// set (infinities and NaNs), tested on the bits so that the loop vectorizes.
bool allFinite(const torch::Tensor& h);

// The cosines of float states (B, T, D) given their statistics: the Gram product divided by the
// norms where that is safe, else each vector scaled to unit length first.
torch::Tensor cosines(const torch::Tensor& h, const VectorStats& stats);

}  // namespace nope
