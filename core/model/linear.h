// The Linear layer of the GPT: y = x W^T (+ b), weight (out, in) as in PyTorch.
// In fp32 on the CPU the three matrix products of a Linear (forward, input gradient, weight
// gradient) go to oneDNN's sgemm, about twice as fast here as the BLAS LibTorch calls, and so do
// autocast's bf16 ones on a CPU without bf16 instructions, on the operands rounded to bf16
// (Bf16Products, model/fast_ops.h); under bf16 autocast elsewhere, for any other dtype or device,
// and while fast kernels are off on the calling thread (FastKernelsScope, model/fast_ops.h), it is
// plain torch::linear.
#pragma once

#include <torch/torch.h>

#include <unordered_map>
#include <vector>

namespace nope {

// y = x W^T + b over the last dimension of x; b may be undefined.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight,
                     const torch::Tensor& bias);

// bf16 copies of a model's weights, cast once for all the shares of a split training step
// (training/split_step.cpp): autocast keeps its bf16 copies per thread, so each share cast every
// weight again. While one lives, nope::linear under bf16 autocast (fast kernels on) takes a
// weight's copy from it, and the gradient reaches the fp32 weight as through autocast's own cast
// (the same values and gradients, bit for bit). Made on one thread before the shares start (the
// casting itself split over `threads` threads), it is that thread's until it ends, and the
// threads onEachThread starts from there read it too (sharedBf16Weights, model/fast_ops.h): other
// threads, another trainer's among them, never see it. The weights must not change while it
// lives; one made inside another's lifetime must end first.
class SharedBf16Weights {
public:
    SharedBf16Weights(const std::vector<torch::Tensor>& params, int64_t threads);
    ~SharedBf16Weights();
    SharedBf16Weights(const SharedBf16Weights&) = delete;
    SharedBf16Weights& operator=(const SharedBf16Weights&) = delete;

    // The copy of `weight`, or null where it has none.
    const torch::Tensor* copyOf(const torch::Tensor& weight) const;

private:
    std::unordered_map<const c10::TensorImpl*, torch::Tensor> m_copies;
    const SharedBf16Weights* m_previous;
};

struct LinearImpl : torch::nn::Module {
    LinearImpl(int64_t inFeatures, int64_t outFeatures, bool bias);
    torch::Tensor forward(const torch::Tensor& x) { return nope::linear(x, weight, bias); }

    torch::Tensor weight;  // (out, in)
    torch::Tensor bias;    // (out) or undefined
};
TORCH_MODULE(Linear);

}  // namespace nope
