// Causal (or bidirectional) self-attention of short sequences in one pass per head: from the
// c_attn output (B, T, 3C) to the heads' weighted sums side by side (B, T, C), scores, mask,
// softmax, dropout on the weights and weighted sum computed together in the core's cache
// (kernels/attention_body.inc), forward and backward, in fp32 whatever the input (bf16 in, bf16
// out: the values autocast's products would round). It replaces LibTorch's two batched products,
// masked_fill, softmax and the copies that split and join the heads; the plain path stays in
// model/gpt.cpp, and tests/model/fused_attention_test.cpp checks the two against each other.
#pragma once

#include <torch/torch.h>

namespace nope {

// Whether fusedAttention takes qkv (B, T, 3C) with nHead heads on this thread: fast kernels on
// (fast_ops.h), a CPU with AVX2 and FMA, a CPU tensor of float or bf16, T <= 256 and a head size
// <= 256; `weights` wanted only where no gradient is (the weights are not differentiable here);
// and the environment variable NOPESCOPE_ATTENTION not set to plain (read once).
bool fusedAttentionApplies(const torch::Tensor& qkv, int64_t nHead, bool weightsWanted);

// The heads' outputs (B, T, C) of qkv's dtype. dropout: the rate on the weights while training (0
// for none), its decisions those of model/dropout.h on the (B, nh, T, T) weights. weights, when
// not null, gets the softmax weights before dropout (B, nh, T, T), fp32.
torch::Tensor fusedAttention(const torch::Tensor& qkv, int64_t nHead, bool causal, double dropout,
                             torch::Tensor* weights = nullptr);

}  // namespace nope
