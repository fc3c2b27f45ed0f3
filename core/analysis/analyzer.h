// Runs a model on a batch of prompts, captures hidden states, and scores them: self-cosine
// matrices by batched matrix products, then the adjacency, norm and variance triple scores per
// prompt. In eval mode, without gradients, in fp32 unless AnalysisOptions::bf16; the model's mode
// is restored after.
#pragma once

#include <torch/torch.h>

#include <atomic>

#include "analysis/analysis.h"
#include "analysis/attention.h"
#include "model/gpt.h"
#include "util/autocast_scope.h"

namespace nope {

struct AnalysisOptions {
    CaptureSet points{CapturePoint::Embedding, CapturePoint::Attn};  // what to score
    int keepPrompts = 0;     // keep the matrices of the first this many prompts (for display)
    int batchSize = 128;     // prompts per forward pass (bounds memory, not results)
    bool attention = false;  // also every layer's attention weights, in the same passes
    // Projections of every capture point and layer (analysis/projection.h), fitted on the first
    // projectionPrompts prompts (their hidden states are kept until the end).
    std::vector<ProjectionMethod> projections;
    int projectionPrompts = 0;
    // Checked between batches; when it becomes true the analysis ends early, marked cancelled.
    const std::atomic<bool>* cancel = nullptr;
    // The forward passes' matrix products in bf16 (CPU autocast, each weight cast once for all
    // threads), on the CPU only: about 1.5 times faster on CPUs with bf16 instructions. The
    // scores and projections stay fp32; the states keep bf16's rounding (attn_in is captured as
    // the fp32 LayerNorm of the fp32 residual stream: its norms differ too little between tokens
    // to survive bf16).
    bool bf16 = false;
};

// Eval mode, fp32 (autocast off), no gradients for a scope; the model's mode and the autocast
// state are restored on exit. Every analysis of a model runs inside one (a bf16 analysis turns
// autocast on around its forward passes only).
class EvalScope {
public:
    explicit EvalScope(GptImpl& model);
    ~EvalScope();
    EvalScope(const EvalScope&) = delete;
    EvalScope& operator=(const EvalScope&) = delete;

private:
    GptImpl& m_model;
    bool m_wasTraining;
    AutocastScope m_fp32;
    torch::NoGradGuard m_noGrad;
};

// Self-cosine similarity of each sequence: h (B, T, D) -> (B, T, T), in fp32.
torch::Tensor selfCosine(const torch::Tensor& hidden);

// Per head of one layer: the sums over prompts of the weights (nh, T, T), of the row entropies
// and of the row distances (nh), each summed over rows too.
struct AttentionSums {
    torch::Tensor matrix;
    torch::Tensor entropy;
    torch::Tensor distance;
};

// The attention weights of an analysis, summed per layer and head as batches come, with the
// matrices of the first prompts kept.
class AttentionAccumulator {
public:
    // weights: per layer (B, nh, T, T), for prompts firstPrompt.. of the analysis.
    void add(const std::vector<torch::Tensor>& weights, int64_t firstPrompt, int keepPrompts);
    // the sums and kept matrices of the prompts that follow this one's
    void add(AttentionAccumulator&& later);
    AttentionAnalysis finish(int64_t count, int64_t T) const;

private:
    std::vector<AttentionSums> m_sums;                                 // per layer
    std::vector<std::vector<std::vector<std::vector<float>>>> m_kept;  // layer, head, prompt
};

// The statistics of attention weights (B, heads, T, T) of one layer, per head
// (analysis/attention.h).
std::vector<HeadAttention> attentionStatistics(const torch::Tensor& weights, int layer);
// The attention of every layer and head on the prompts (N, T) or inputs (N, T, C): mean matrices,
// entropy, distance.
AttentionAnalysis analyzeAttention(GptImpl& model, const torch::Tensor& tokens,
                                   int batchSize = 128);

// The forward pass of an analysis: tokens (B, T) int64, or inputs (B, T, C) in place of the
// token embeddings (the ablations' drawn inputs).
void forwardAny(GptImpl& model, const torch::Tensor& chunk, HiddenStates& states);

// tokens (N, T) int64 or inputs (N, T, C); `prompts` (optional) their text, kept for the first
// keepPrompts.
Analysis analyze(GptImpl& model, const torch::Tensor& tokens, const AnalysisOptions& options,
                 const std::vector<std::string>& prompts = {});

}  // namespace nope
