// The Linear layer of the GPT: y = x W^T (+ b), weight (out, in) as in PyTorch.
// In fp32 on the CPU the three matrix products of a Linear (forward, input gradient, weight
// gradient) go to oneDNN's sgemm, about twice as fast here as the BLAS LibTorch calls, and so do
// autocast's bf16 ones on a CPU without bf16 instructions, on the operands rounded to bf16
// (Bf16Products, model/fast_ops.h); under bf16 autocast elsewhere, for any other dtype or device,
// and while fast kernels are off on the calling thread (FastKernelsScope, model/fast_ops.h), it is
// plain torch::linear.
#pragma once

#include <torch/torch.h>

namespace nope {

// y = x W^T + b over the last dimension of x; b may be undefined.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight,
                     const torch::Tensor& bias);

struct LinearImpl : torch::nn::Module {
    LinearImpl(int64_t inFeatures, int64_t outFeatures, bool bias);
    torch::Tensor forward(const torch::Tensor& x) { return nope::linear(x, weight, bias); }

    torch::Tensor weight;  // (out, in)
    torch::Tensor bias;    // (out) or undefined
};
TORCH_MODULE(Linear);

}  // namespace nope
