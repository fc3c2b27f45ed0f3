// What the analysis of one model on one set of prompts found: value types only (no tensors), so
// that they can cross threads and be drawn by widgets.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/attention.h"
#include "analysis/projection.h"
#include "model/capture_point.h"

namespace nope {

// The scores of one capture point in one layer, over all prompts.
struct LayerScores {
    CapturePoint point = CapturePoint::Embedding;
    int layer = 0;                  // 0 for embedding, 1..L for the per-block points
    double adjacencyMean = 0.0;     // adjacency probability score, mean over prompts
    double adjacencyStd = 0.0;      // and its population standard deviation
    double normScore = 0.0;         // triple score of per-token L2 norm shrinking with position
    double varianceScore = 0.0;     // same for the per-token variance across dimensions
    std::vector<float> meanMatrix;  // T x T self-cosine, mean over prompts
    std::vector<std::vector<float>> promptMatrices;  // T x T of each kept prompt
};

// Where hidden states first stop being finite numbers, in the order the forward pass computes
// them (the embedding, then each block's attn_in, attn and resid), among the points analysed.
struct NonFinite {
    CapturePoint point = CapturePoint::Embedding;
    int layer = 0;
    bool nan = true;  // NaN somewhere; otherwise only infinities
};

struct Analysis {
    int samples = 0;                       // prompts analysed
    int seqLen = 0;                        // T: tokens per (padded) prompt
    std::vector<std::string> keptPrompts;  // padded text of the prompts whose matrices were kept
    std::vector<LayerScores> rows;         // point-major: embedding, then each point by layer
    double forwardSeconds = 0.0;           // time in the model's forward passes
    double scoringSeconds = 0.0;           // time in cosine matrices and triple counts
    double projectionSeconds = 0.0;        // time in the projections' fits
    bool cancelled = false;                // stopped early: the scores cover fewer prompts
    AttentionAnalysis attention;           // every layer's heads, when the analysis recorded them
    ProjectionSet projection;              // the projector's points, when the analysis asked
    std::optional<NonFinite> nonFinite;    // set when some hidden state is NaN or infinite

    const LayerScores* find(CapturePoint point, int layer) const;
    // "the hidden states are NaN from attn layer 1 on (...)", or empty when all are finite.
    std::string nonFiniteMessage() const;
    int layerCount() const;  // largest layer present
};

}  // namespace nope
