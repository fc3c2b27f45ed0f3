#include "model/gpt.h"

#include <ATen/autocast_mode.h>

#include "model/fast_ops.h"
#include "model/fused_attention.h"

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>

namespace nope {

const torch::Tensor& HiddenStates::at(CapturePoint point, int layer) const {
    switch (point) {
        case CapturePoint::Embedding:
            return embedding;
        case CapturePoint::AttnIn:
            return attnIn[layer - 1];
        case CapturePoint::Attn:
            return attn[layer - 1];
        case CapturePoint::Resid:
            return resid[layer - 1];
    }
    return embedding;
}

LayerNormImpl::LayerNormImpl(int64_t dim, bool withBias) {
    weight = register_parameter("weight", torch::ones({dim}));
    if (withBias) {
        bias = register_parameter("bias", torch::zeros({dim}));
    }
}

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
    return layerNorm(x, weight, bias, /*eps=*/1e-5);
}

std::pair<torch::Tensor, torch::Tensor> LayerNormImpl::addAndForward(const torch::Tensor& x,
                                                                     const torch::Tensor& branch) {
    return residualAddLayerNorm(x, branch, weight, bias, /*eps=*/1e-5);
}

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const ModelConfig& config)
    : nHead(config.nHead), causal(config.attention == AttentionKind::Causal) {
    c_attn = register_module("c_attn", Linear(config.nEmbd, 3 * config.nEmbd, config.bias));
    c_proj = register_module("c_proj", Linear(config.nEmbd, config.nEmbd, config.bias));
    attn_dropout = register_module("attn_dropout", Dropout(config.dropout));
    resid_dropout = register_module("resid_dropout", Dropout(config.dropout));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x, torch::Tensor* heads,
                                               KvCache* cache, size_t layer,
                                               const torch::Tensor& hidden,
                                               torch::Tensor* weights) {
    if (!variant.isModelOwn()) {
        TORCH_CHECK(!cache && !hidden.defined(),
                    "an attention ablation runs without a cache or a padding mask");
        return forwardVariant(x, heads, weights);
    }
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    const int64_t hs = C / nHead;
    const auto qkvJoined = c_attn(x);  // (B, T, 3C)
    if (!cache && !hidden.defined() && fusedAttentionApplies(qkvJoined, nHead, weights)) {
        auto y = fusedAttention(qkvJoined, nHead, causal,
                                attn_dropout->is_training() ? attn_dropout->p : 0.0, weights);
        if (heads) {
            *heads = y;
        }
        return resid_dropout(c_proj(y));
    }
    auto qkv = qkvJoined.split(C, /*dim=*/2);                 // 3 x (B, T, C)
    auto q = qkv[0].view({B, T, nHead, hs}).transpose(1, 2);  // (B, nh, T, hs)
    auto k = qkv[1].view({B, T, nHead, hs}).transpose(1, 2);  // (B, nh, T, hs)
    auto v = qkv[2].view({B, T, nHead, hs}).transpose(1, 2);  // (B, nh, T, hs)
    if (cache) {
        if (cache->keys[layer].defined()) {
            k = torch::cat({cache->keys[layer], k}, /*dim=*/2);  // (B, nh, past + T, hs)
            v = torch::cat({cache->values[layer], v}, /*dim=*/2);
        }
        cache->keys[layer] = k;
        cache->values[layer] = v;
    }
    const int64_t past = k.size(2) - T;

    const int64_t S = k.size(2);  // keys: past + T
    auto att = batchedMatmul(q.reshape({B * nHead, T, hs}), k.reshape({B * nHead, S, hs}),
                             /*transposeB=*/true)
                   .view({B, nHead, T, S}) *
               (1.0 / std::sqrt(double(hs)));  // (B, nh, T, S)
    if (causal) {
        // query i (at position past + i) must not see keys after it
        auto future =
            torch::ones({T, past + T}, x.options().dtype(torch::kBool)).triu(/*diagonal=*/past + 1);
        att = att.masked_fill(future, -std::numeric_limits<float>::infinity());
    }
    if (hidden.defined()) {
        att = att.masked_fill(hidden, -std::numeric_limits<float>::infinity());
    }
    att = torch::softmax(att, /*dim=*/-1);
    if (weights) {
        *weights = att;
    }
    att = attn_dropout(att);
    auto y = batchedMatmul(att.reshape({B * nHead, T, S}), v.reshape({B * nHead, S, hs}),
                           /*transposeB=*/false)
                 .view({B, nHead, T, hs});               // (B, nh, T, hs)
    y = y.transpose(1, 2).contiguous().view({B, T, C});  // (B, T, C), heads concatenated
    if (heads) {
        *heads = y;
    }
    return resid_dropout(c_proj(y));
}

namespace {

// Attention weights from scaled scores s (B, nh, T, S) under an ablation's normalisation;
// `future` (T, S) bool marks the keys after each query, undefined for bidirectional attention.
torch::Tensor normalizeScores(torch::Tensor s, const torch::Tensor& future, AttentionNorm norm,
                              bool asAuthors) {
    const bool masked = future.defined();
    if (norm == AttentionNorm::Softmax) {
        return torch::softmax(
            masked ? s.masked_fill(future, -std::numeric_limits<float>::infinity()) : s, -1);
    }
    if (norm == AttentionNorm::Uniform) {
        auto w = torch::ones_like(s);
        if (masked && !asAuthors) {
            w = w.masked_fill(future, 0.0);
        }
        return w / w.sum(-1, /*keepdim=*/true);
    }
    if (masked && asAuthors) {
        s = s.masked_fill(future, 0.0);  // a score of 0, then the function: f(0) may weigh it
    }
    torch::Tensor f;
    switch (norm) {
        case AttentionNorm::Abs:
            f = s.abs();
            break;
        case AttentionNorm::Relu:
            f = torch::relu(s);
            break;
        case AttentionNorm::Gelu:
            f = torch::gelu(s, "tanh");
            break;
        case AttentionNorm::Sigmoid:
            f = torch::sigmoid(s);
            break;
        default:  // NoDiv, DivSum: the scores themselves
            f = s;
            break;
    }
    if (masked && !asAuthors) {
        f = f.masked_fill(future, 0.0);
    }
    if (norm == AttentionNorm::NoDiv) {
        return f;
    }
    auto sum = f.sum(-1, /*keepdim=*/true);
    if (asAuthors) {
        return f / sum;
    }
    return torch::where(sum == 0, torch::zeros_like(f), f / sum);
}

}  // namespace

torch::Tensor CausalSelfAttentionImpl::forwardVariant(const torch::Tensor& x, torch::Tensor* heads,
                                                      torch::Tensor* weights) {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    const int64_t hs = C / nHead;
    if (variant.inputOut) {
        if (heads) {
            *heads = x;
        }
        return x;
    }
    torch::Tensor q, k, v;
    if (variant.shrinkX > 0.0) {
        q = k = v = x / variant.shrinkX;
    } else {
        auto qkv = c_attn(x).split(C, /*dim=*/2);
        q = variant.noQ ? x : qkv[0];
        k = variant.noK ? x : qkv[1];
        v = variant.noV ? x : qkv[2];
    }
    auto split = [&](const torch::Tensor& t) {
        return t.reshape({B, T, nHead, hs}).transpose(1, 2);  // (B, nh, T, hs)
    };
    q = split(q);
    k = split(k);
    v = split(v);
    auto s = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(hs)));
    torch::Tensor future;
    if (causal) {
        future = torch::ones({T, T}, x.options().dtype(torch::kBool)).triu(/*diagonal=*/1);
    }
    auto w = normalizeScores(s, future, variant.norm, variant.asAuthors);
    if (weights) {
        *weights = w;
    }
    w = attn_dropout(w);
    auto y = torch::matmul(w, v).transpose(1, 2).contiguous().view({B, T, C});
    if (heads) {
        *heads = y;
    }
    return resid_dropout(c_proj(y));
}

MlpImpl::MlpImpl(const ModelConfig& config) {
    c_fc = register_module("c_fc", Linear(config.nEmbd, 4 * config.nEmbd, config.bias));
    c_proj = register_module("c_proj", Linear(4 * config.nEmbd, config.nEmbd, config.bias));
    dropout = register_module("dropout", Dropout(config.dropout));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
    return dropout(c_proj(geluTanh(c_fc(x))));
}

BlockImpl::BlockImpl(const ModelConfig& config) {
    ln_1 = register_module("ln_1", LayerNorm(config.nEmbd, config.bias));
    attn = register_module("attn", CausalSelfAttention(config));
    ln_2 = register_module("ln_2", LayerNorm(config.nEmbd, config.bias));
    mlp = register_module("mlp", Mlp(config));
}

torch::Tensor BlockImpl::forward(torch::Tensor x, HiddenStates* capture, KvCache* cache,
                                 size_t layer, const torch::Tensor& hidden,
                                 const torch::Tensor& normedIn, LayerNormImpl* next,
                                 torch::Tensor* nextNormed) {
    const bool any = capture != nullptr;
    const auto normed = normedIn.defined() ? normedIn : ln_1(x);
    torch::Tensor attnIn;
    if (any && capture->wanted.contains(CapturePoint::AttnIn)) {
        attnIn = normed;
        if (normed.scalar_type() != x.scalar_type()) {
            // bf16 autocast: the LayerNorm again in fp32 for the capture, since its outputs' norms
            // differ between tokens by less than bf16 resolves (the stream itself is fp32)
            // restored on exit, without AutocastScope's nesting count and cache clearing
            ScopedSetting<bool, at::autocast::is_cpu_enabled, at::autocast::set_cpu_enabled> off(
                false);
            attnIn = ln_1(x);
        }
    }
    torch::Tensor heads;
    auto [stream, mlpIn] = ln_2->addAndForward(
        x, attn->forward(normed,
                         any && capture->wanted.contains(CapturePoint::Attn) ? &heads : nullptr,
                         cache, layer, hidden,
                         any && capture->attentionWeights ? &capture->weights[layer] : nullptr));
    if (next != nullptr && nextNormed != nullptr) {
        std::tie(x, *nextNormed) = next->addAndForward(stream, mlp(mlpIn));
    } else {
        x = residualAdd(stream, mlp(mlpIn));
    }
    if (any) {
        if (attnIn.defined()) {
            capture->attnIn[layer] = attnIn;
        }
        if (capture->wanted.contains(CapturePoint::Attn)) {
            capture->attn[layer] = heads;
        }
        if (capture->wanted.contains(CapturePoint::Resid)) {
            capture->resid[layer] = x;
        }
    }
    return x;
}

TransformerImpl::TransformerImpl(const ModelConfig& config) {
    wte = register_module("wte", torch::nn::Embedding(config.vocabSize, config.nEmbd));
    if (config.positional == PositionalEncoding::Learned) {
        wpe = register_module("wpe", torch::nn::Embedding(config.blockSize, config.nEmbd));
    }
    drop = register_module("drop", Dropout(config.dropout));
    h = register_module("h", torch::nn::ModuleList());
    for (int i = 0; i < config.nLayer; ++i) {
        blocks.push_back(Block(config));
        h->push_back(blocks.back());
    }
    ln_f = register_module("ln_f", LayerNorm(config.nEmbd, config.bias));
}

GptImpl::GptImpl(const ModelConfig& config) : m_config(config) {
    const FieldErrors errors = validate(config);
    if (!errors.empty()) {
        throw std::invalid_argument(describe(errors.front()));
    }
    transformer = register_module("transformer", Transformer(config));
    if (config.positional == PositionalEncoding::Sinusoidal) {
        m_sinusoidal = sinusoidalTable(config.blockSize, config.nEmbd);
    }
}

Block GptImpl::block(size_t layer) const {
    return transformer->blocks.at(layer);
}

torch::Tensor GptImpl::forward(const torch::Tensor& idx, HiddenStates* capture, Head head,
                               KvCache* cache, const torch::Tensor& padding) {
    const int64_t T = idx.size(1);
    const int64_t past = cache ? cache->length : 0;
    if (past + T > m_config.blockSize) {
        throw std::invalid_argument("sequence of " + std::to_string(past + T) +
                                    " tokens exceeds the context of " +
                                    std::to_string(m_config.blockSize));
    }
    if (cache) {
        if (m_config.attention != AttentionKind::Causal) {
            throw std::logic_error("a key/value cache needs causal attention");
        }
        cache->keys.resize(transformer->blocks.size());
        cache->values.resize(transformer->blocks.size());
    }
    auto x = transformer->wte(idx);  // (B, T, C)
    if (transformer->wpe) {
        x = x + transformer->wpe(torch::arange(past, past + T, idx.options()));
    } else if (m_sinusoidal.defined()) {
        x = x + m_sinusoidal.slice(0, past, past + T).to(x.device());
    }
    torch::Tensor hidden;
    if (padding.defined() || (cache && cache->padding.defined())) {
        const auto options = idx.options().dtype(torch::kBool);
        auto own =
            padding.defined() ? padding.to(options) : torch::zeros({idx.size(0), T}, options);
        auto keys = cache && cache->padding.defined() ? torch::cat({cache->padding, own}, 1) : own;
        hidden = paddingMask(keys, past);
        if (cache) {
            cache->padding = keys;
        }
    }
    return run(x, capture, head, cache, hidden);
}

torch::Tensor GptImpl::forwardInputs(const torch::Tensor& x, HiddenStates* capture, Head head) {
    TORCH_CHECK(x.dim() == 3 && x.size(2) == m_config.nEmbd,
                "inputs must be (B, T, " + std::to_string(m_config.nEmbd) + ")");
    if (x.size(1) > m_config.blockSize) {
        throw std::invalid_argument("sequence of " + std::to_string(x.size(1)) +
                                    " tokens exceeds the context of " +
                                    std::to_string(m_config.blockSize));
    }
    return run(x, capture, head, nullptr, {});
}

void GptImpl::setAttentionVariant(const AttentionVariant& variant) {
    for (auto& block : transformer->blocks) {
        block->attn->variant = variant;
    }
}

torch::Tensor GptImpl::run(torch::Tensor x, HiddenStates* capture, Head head, KvCache* cache,
                           const torch::Tensor& hidden) {
    const int64_t T = x.size(1);
    x = transformer->drop(x);
    if (capture) {
        const size_t L = transformer->blocks.size();
        capture->attnIn.assign(L, {});
        capture->attn.assign(L, {});
        capture->resid.assign(L, {});
        capture->weights.assign(L, {});
        if (capture->wanted.contains(CapturePoint::Embedding)) {
            capture->embedding = x;
        }
    }
    // each block's last residual add and the LayerNorm after it in one pass: the next block's
    // ln_1, and ln_f when every position gets logits
    const size_t L = transformer->blocks.size();
    torch::Tensor normed;
    for (size_t l = 0; l < L; ++l) {
        LayerNormImpl* next = l + 1 < L                    ? transformer->blocks[l + 1]->ln_1.get()
                              : head == Head::AllPositions ? transformer->ln_f.get()
                                                           : nullptr;
        torch::Tensor nextNormed;
        x = transformer->blocks[l]->forward(x, capture, cache, l, hidden, normed, next,
                                            &nextNormed);
        normed = std::move(nextNormed);
    }
    if (cache) {
        cache->length += T;
    }
    if (head == Head::None) {
        return x;
    }
    if (head == Head::LastPosition) {
        normed = transformer->ln_f(x.slice(/*dim=*/1, T - 1, T));
    } else if (!normed.defined()) {
        normed = transformer->ln_f(x);  // no blocks
    }
    return nope::linear(normed, transformer->wte->weight, {});  // tied head, (B, T, V)
}

torch::Tensor paddingMask(const torch::Tensor& keyPadding, int64_t past) {
    const int64_t B = keyPadding.size(0), S = keyPadding.size(1), T = S - past;
    auto keys = torch::arange(S, keyPadding.options().dtype(torch::kLong)).view({1, S});
    auto queries = torch::arange(past, S, keys.options()).view({T, 1});
    auto own = keys == queries;                                           // (T, S)
    return keyPadding.view({B, 1, 1, S}).logical_and(own.logical_not());  // (B, 1, T, S)
}

torch::Tensor sinusoidalTable(int64_t positions, int64_t dim) {
    auto table = torch::zeros({positions, dim});
    auto pos = torch::arange(positions, torch::kFloat).unsqueeze(1);        // (T, 1)
    auto i = torch::arange(0, dim, 2, torch::kFloat);                       // (ceil(C/2))
    auto angle = pos * torch::exp(i * (-std::log(10000.0) / double(dim)));  // (T, C/2)
    table.slice(1, 0, dim, 2).copy_(torch::sin(angle));
    table.slice(1, 1, dim, 2).copy_(torch::cos(angle).slice(1, 0, dim / 2));
    return table;
}

int64_t countParameters(const torch::nn::Module& module) {
    std::set<const void*> seen;
    int64_t total = 0;
    for (const auto& p : module.parameters()) {
        if (seen.insert(p.data_ptr()).second) {
            total += p.numel();
        }
    }
    return total;
}

}  // namespace nope
