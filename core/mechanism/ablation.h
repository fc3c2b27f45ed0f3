// The ablations of the mechanism lab: a model at init run with one switch of its attention or of
// its inputs at a time, and the adjacency score of every layer under each. They are the authors'
// inference-time switches (their model's attention forward and their visualization script):
//   normalisation   softmax (the model's own), nodiv (the scaled scores as weights), divsum
//                   (scores / row sum), abs, relu, gelu, sigmoid (the function, then / row sum),
//                   uniform (equal weights)
//   projections     no_q, no_k, no_v (that one replaced by the attention's input x), shrink_x
//                   (q = k = v = x / S), v_out (the attention returns x)
//   inputs          eqx (equally spaced unit vectors x 0.05), randx (uniform [0, 1) vectors),
//                   constant (one uniform vector at every position), in place of the embeddings
// Causality is kept in every variant unless asAuthors (model/attention_variant.h says how their
// code differs). No LibTorch in this header: the CLI and the Mechanism tab share it; the runs are
// in mechanism/ablation_runner.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis.h"
#include "model/attention_variant.h"
#include "model/capture_point.h"

namespace nope {

enum class Ablation {
    Softmax,
    NoDiv,
    DivSum,
    Abs,
    Relu,
    Gelu,
    Sigmoid,
    Uniform,
    NoQ,
    NoK,
    NoV,
    ShrinkX,
    VOut,
    Eqx,
    Randx,
    Constant
};

// Every ablation in the table's order (the model's own attention first).
const std::vector<Ablation>& allAblations();
std::vector<std::string> ablationNames();
std::string toString(Ablation ablation);
std::optional<Ablation> parseAblation(std::string_view name);
// One line on what the ablation does, for help texts and tooltips.
std::string describeAblation(Ablation ablation, bool asAuthors);
// eqx, randx and constant: drawn inputs in place of the token embeddings.
bool replacesInputs(Ablation ablation);

struct AblationConfig {
    std::vector<Ablation> ablations = allAblations();
    double shrinkX = 10.0;   // S of shrink_x
    bool asAuthors = false;  // the research code's non-causal details (attention_variant.h)
    CaptureSet points{CapturePoint::Embedding, CapturePoint::Attn};
    uint64_t inputSeed = 1;  // the draws of eqx, randx and constant
    int keepPrompts = 0;     // per ablation, the matrices of this many prompts (for display)
};

// The attention switches of an ablation (the model's own for the input ablations).
AttentionVariant variantOf(Ablation ablation, const AblationConfig& config);

// A problem with the settings for prompts of `seqLen` tokens and a model `width` wide, naming
// the flag ("--shrink-x: 0 (allowed: a number above 0)").
std::optional<std::string> checkAblations(const AblationConfig& config, int seqLen, int width);

struct AblationResult {
    Ablation ablation = Ablation::Softmax;
    Analysis analysis;       // the scores and mean matrices of every point and layer
    bool nonFinite = false;  // some hidden state was NaN or infinite (a zero row sum, asAuthors)
};

struct AblationTable {
    AblationConfig config;
    int samples = 0;
    int seqLen = 0;
    std::vector<AblationResult> results;  // in config.ablations' order
    double seconds = 0.0;

    const AblationResult* find(Ablation ablation) const;
};

// ablations.csv: the header `ablation,point,layer,adjacency_mean,adjacency_std`, then one line
// per ablation, point and layer.
std::string ablationsCsv(const AblationTable& table);

}  // namespace nope
