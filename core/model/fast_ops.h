// Differentiable CPU kernels for the operations that dominated a LibTorch training step of this
// model after the Linear layers (measured with the autograd profiler, see the README):
//   - GELU with the tanh approximation, forward and backward, in one pass each (float, bf16), on
//     CPUs with AVX2 and FMA (kernels/gelu_avx2.cpp);
//   - the batched matrix products of attention in fp32, which LibTorch runs one small BLAS call
//     per (batch, head) with a tensor slice each, here oneDNN's sgemm over a parallel loop.
// Anything else (other dtypes, other devices) falls back to the LibTorch operation.
#pragma once

#include <torch/torch.h>

namespace nope {

// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
torch::Tensor geluTanh(const torch::Tensor& x);

// a (N, M, K) times b: (N, K, P) when !transposeB, or b^T with b (N, P, K) when transposeB.
torch::Tensor batchedMatmul(const torch::Tensor& a, const torch::Tensor& b, bool transposeB);

}  // namespace nope
