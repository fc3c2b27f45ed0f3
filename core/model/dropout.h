// Dropout with a counter-based random mask: each element's keep/drop decision is a hash of
// (seed, row, element index within the row), a row being an index of the tensor's first (batch)
// dimension, so the mask is the same whatever the thread count, and a row's mask is the same
// whether the batch runs whole or in parts (split across threads, micro-batches or processes:
// each part names its first row in the stream). Generating it
// costs a fraction of LibTorch's bernoulli_ (measured: the largest non-GEMM cost of a training
// step). Inside a DropoutStream scope the per-call seeds come from that stream (the trainer opens
// one per step, derived from its seed and the step number, so a run is reproducible and resumable
// without any generator state); outside one they come from LibTorch's default generator. On other
// devices it falls back to torch::dropout.
#pragma once

#include <torch/torch.h>

namespace nope {

// Seeds every dropout call on this thread while it lives: call i gets a seed mixed from
// (seed, i), and the rows of its tensor are the batch's rows firstRow, firstRow + 1, ... (a part
// of a batch passes the batch's index of its first row). Scopes do not nest.
class DropoutStream {
public:
    explicit DropoutStream(uint64_t seed, int64_t firstRow = 0);
    ~DropoutStream();
    DropoutStream(const DropoutStream&) = delete;
    DropoutStream& operator=(const DropoutStream&) = delete;
};

// Identity unless `training` and p > 0; otherwise zeroes elements with probability p and scales
// the rest by 1 / (1 - p). Differentiable.
torch::Tensor dropout(const torch::Tensor& x, double p, bool training);

// The mask dropout(x, p, true) would multiply a contiguous tensor of n elements in `rows` rows by
// (0 where dropped, else 1 / (1 - p)), as fp32, drawing its seed as that call would: the same
// decisions, for kernels that apply dropout themselves (model/fused_attention.h).
torch::Tensor dropoutMask(int64_t rows, int64_t n, double p);

struct DropoutImpl : torch::nn::Module {
    explicit DropoutImpl(double p) : p(p) {}
    torch::Tensor forward(const torch::Tensor& x) { return nope::dropout(x, p, is_training()); }
    double p;
};
TORCH_MODULE(Dropout);

}  // namespace nope
