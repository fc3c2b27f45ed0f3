// Runs a model on a batch of prompts, captures hidden states, and scores them: self-cosine
// matrices by batched matrix products, then the adjacency, norm and variance triple scores per
// prompt. Always in fp32 and eval mode, without gradients; the model's mode is restored after.
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
    int keepPrompts = 0;  // keep the matrices of the first this many prompts (for display)
    int batchSize = 128;  // prompts per forward pass (bounds memory, not results)
    // Checked between batches; when it becomes true the analysis ends early, marked cancelled.
    const std::atomic<bool>* cancel = nullptr;
};

// Eval mode, fp32 (autocast off), no gradients for a scope; the model's mode and the autocast
// state are restored on exit. Every analysis of a model runs inside one.
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
