// The GPT studied by NoPEScope: nanoGPT's decoder-only transformer, by default with no positional
// encoding at all (NoPE). Reads top to bottom: LayerNorm, attention, MLP, block, model.
//   x = drop(wte(idx) [+ pe]); for each block: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
//   logits = ln_f(x) wte^T   (the output head is tied to the token embedding)
// Submodule names follow nanoGPT so that state-dict keys match (transformer.h.0.attn.c_attn...).
// Not here: weight init (init.h) and training (core/training).
#pragma once

#include <torch/torch.h>

#include <utility>
#include <vector>

#include "model/attention_variant.h"
#include "model/capture_point.h"
#include "model/dropout.h"
#include "model/linear.h"
#include "model/model_config.h"

namespace nope {

// Hidden states recorded during one forward pass, each (B, T, C). Only the points in `wanted`
// are recorded; recording keeps a reference to a tensor the pass computes anyway.
struct HiddenStates {
    CaptureSet wanted;
    bool attentionWeights = false;  // also record every block's attention weights (free when off)
    torch::Tensor embedding;
    std::vector<torch::Tensor> attnIn;  // per block, index 0 is layer 1
    std::vector<torch::Tensor> attn;
    std::vector<torch::Tensor> resid;
    std::vector<torch::Tensor> weights;  // per block, (B, nh, T, keys) after the softmax

    // The recorded tensor of a site (layer 0 for the embedding).
    const torch::Tensor& at(CapturePoint point, int layer) const;
};

// Keys and values of the tokens processed so far, for incremental (greedy) decoding: each call
// then feeds only the new tokens. Valid for causal attention only.
struct KvCache {
    std::vector<torch::Tensor> keys;    // per block, (B, nh, T_past, hs)
    std::vector<torch::Tensor> values;  // per block, (B, nh, T_past, hs)
    torch::Tensor padding;              // (B, T_past) bool when the prompts had a padding mask
    int64_t length = 0;                 // tokens processed so far
};

// LayerNorm with a weight and an optional bias (PyTorch's always has both), eps 1e-5.
struct LayerNormImpl : torch::nn::Module {
    LayerNormImpl(int64_t dim, bool bias);
    torch::Tensor forward(const torch::Tensor& x);
    // {x + branch, forward(x + branch)}: the residual add before this LayerNorm, in one pass
    // with it where nope::residualAddLayerNorm fuses them.
    std::pair<torch::Tensor, torch::Tensor> addAndForward(const torch::Tensor& x,
                                                          const torch::Tensor& branch);

    torch::Tensor weight;
    torch::Tensor bias;  // undefined without bias
};
TORCH_MODULE(LayerNorm);

struct CausalSelfAttentionImpl : torch::nn::Module {
    explicit CausalSelfAttentionImpl(const ModelConfig& config);
    // x (B, T, C). Writes the concatenated head outputs (before c_proj) to *heads when given.
    // With a cache, x holds only new tokens; their keys and values are appended at `layer`.
    // `hidden` (B, 1, T, keys) bool, when defined, hides keys from queries on top of the causal
    // mask (the padding mask, see GptImpl::forward).
    // `weights`, when given, receives the attention weights after the softmax (B, nh, T, keys).
    torch::Tensor forward(const torch::Tensor& x, torch::Tensor* heads = nullptr,
                          KvCache* cache = nullptr, size_t layer = 0,
                          const torch::Tensor& hidden = {}, torch::Tensor* weights = nullptr);

    Linear c_attn{nullptr};  // C -> 3C, q, k, v fused
    Linear c_proj{nullptr};  // C -> C
    Dropout attn_dropout{nullptr};
    Dropout resid_dropout{nullptr};
    int64_t nHead;
    bool causal;
    AttentionVariant variant;  // an ablation's switches; the model's own attention by default

private:
    // The attention under `variant` (no cache, no padding mask): plain tensor operations.
    torch::Tensor forwardVariant(const torch::Tensor& x, torch::Tensor* heads,
                                 torch::Tensor* weights);
};
TORCH_MODULE(CausalSelfAttention);

struct MlpImpl : torch::nn::Module {
    explicit MlpImpl(const ModelConfig& config);
    torch::Tensor forward(const torch::Tensor& x);

    Linear c_fc{nullptr};    // C -> 4C
    Linear c_proj{nullptr};  // 4C -> C
    Dropout dropout{nullptr};
};
TORCH_MODULE(Mlp);

struct BlockImpl : torch::nn::Module {
    explicit BlockImpl(const ModelConfig& config);
    // Records this block's attn_in, attn and resid into `capture` at `layer` (0-based) when given.
    // `normed`, when defined, is ln_1(x) already (the block before normalized its output in the
    // pass of its last residual add). With `next` (the LayerNorm that reads this block's output:
    // the next block's ln_1, or ln_f), *nextNormed gets next(output), made in that pass.
    torch::Tensor forward(torch::Tensor x, HiddenStates* capture = nullptr,
                          KvCache* cache = nullptr, size_t layer = 0,
                          const torch::Tensor& hidden = {}, const torch::Tensor& normed = {},
                          LayerNormImpl* next = nullptr, torch::Tensor* nextNormed = nullptr);

    LayerNorm ln_1{nullptr};
    CausalSelfAttention attn{nullptr};
    LayerNorm ln_2{nullptr};
    Mlp mlp{nullptr};
};
TORCH_MODULE(Block);

// The `transformer` container of nanoGPT: wte, wpe (learned PE only), drop, h, ln_f.
struct TransformerImpl : torch::nn::Module {
    explicit TransformerImpl(const ModelConfig& config);

    torch::nn::Embedding wte{nullptr};
    torch::nn::Embedding wpe{nullptr};  // null unless positional == learned
    Dropout drop{nullptr};
    torch::nn::ModuleList h{nullptr};  // the blocks, registered under nanoGPT's names h.0, h.1...
    LayerNorm ln_f{nullptr};
    std::vector<Block> blocks;  // the same blocks, typed
};
TORCH_MODULE(Transformer);

// Which positions get logits.
enum class Head { AllPositions, LastPosition, None };

struct GptImpl : torch::nn::Module {
    explicit GptImpl(const ModelConfig& config);

    // idx (B, T) int64 token ids, T <= block size. Returns logits (B, T, V), (B, 1, V) for
    // LastPosition, or the final hidden states before ln_f (B, T, C) for None. With a cache
    // (causal attention only) idx holds the tokens after the cached ones. `padding` (B, T) bool,
    // when defined, marks padding tokens: no token attends to one but the padding token itself
    // (the masked and next objectives); a cache keeps the mask for the tokens that follow.
    torch::Tensor forward(const torch::Tensor& idx, HiddenStates* capture = nullptr,
                          Head head = Head::AllPositions, KvCache* cache = nullptr,
                          const torch::Tensor& padding = {});

    // x (B, T, C) in place of the token embeddings (and of any positional encoding): the
    // ablations' drawn inputs. Dropout, blocks and head as in forward.
    torch::Tensor forwardInputs(const torch::Tensor& x, HiddenStates* capture = nullptr,
                                Head head = Head::AllPositions);

    // Every block's attention switches (mechanism/ablation.h); AttentionVariant{} restores the
    // model's own attention.
    void setAttentionVariant(const AttentionVariant& variant);

    const ModelConfig& config() const { return m_config; }
    Block block(size_t layer) const;

    Transformer transformer{nullptr};

private:
    // Dropout, the blocks and the head on the block-0 input x (B, T, C); `hidden` as in
    // CausalSelfAttentionImpl::forward.
    torch::Tensor run(torch::Tensor x, HiddenStates* capture, Head head, KvCache* cache,
                      const torch::Tensor& hidden);

    ModelConfig m_config;
    torch::Tensor m_sinusoidal;  // (block size, C) fixed table when positional == sinusoidal
};
TORCH_MODULE(Gpt);

// Which keys each query may not see because of padding: (B, 1, T, past + T) bool from the
// padding of every key (B, past + T), each query keeping its own key.
torch::Tensor paddingMask(const torch::Tensor& keyPadding, int64_t past);

// Vaswani et al.'s fixed table: sin on even dimensions, cos on odd ones. (T, C)
torch::Tensor sinusoidalTable(int64_t positions, int64_t dim);

// Unique parameters of a module (a tied tensor counted once).
int64_t countParameters(const torch::nn::Module& module);

}  // namespace nope
