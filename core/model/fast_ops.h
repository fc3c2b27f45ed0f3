// Differentiable CPU kernels for the operations that dominated a LibTorch training step of this
// model after the Linear layers (measured with the autograd profiler, see the README):
//   - GELU with the tanh approximation, forward and backward, in one pass each (float, bf16), on
//     CPUs with AVX2 and FMA (kernels/kernels_avx2.cpp, or kernels_avx512.cpp where the CPU has
//     AVX-512);
//   - the batched matrix products of attention in fp32, which LibTorch runs one small BLAS call
//     per (batch, head) with a tensor slice each, here oneDNN's sgemm over a parallel loop.
// Anything else (other dtypes, other devices) falls back to the LibTorch operation, and so does
// everything, nope::linear's oneDNN path (model/linear.h) included, while fast kernels are turned
// off on the calling thread: the plain LibTorch twin that tests/model/model_fixture_test.cpp checks
// the whole model against, alongside the fast one.
#pragma once

#include <torch/torch.h>

namespace nope {

// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
torch::Tensor geluTanh(const torch::Tensor& x);

// a (N, M, K) times b: (N, K, P) when !transposeB, or b^T with b (N, P, K) when transposeB.
torch::Tensor batchedMatmul(const torch::Tensor& a, const torch::Tensor& b, bool transposeB);

// Whether geluTanh, batchedMatmul and nope::linear may take their fast kernels on this thread (on
// by default). The choice is made in the forward pass; its backward follows it.
bool fastKernelsEnabled();
void setFastKernels(bool enabled);

// Turns the fast kernels on or off on this thread while it lives, then restores the previous
// setting.
class FastKernelsScope {
public:
    explicit FastKernelsScope(bool enabled) : m_previous(fastKernelsEnabled()) {
        setFastKernels(enabled);
    }
    ~FastKernelsScope() { setFastKernels(m_previous); }
    FastKernelsScope(const FastKernelsScope&) = delete;
    FastKernelsScope& operator=(const FastKernelsScope&) = delete;

private:
    bool m_previous;
};

}  // namespace nope
