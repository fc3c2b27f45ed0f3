#include "analysis/analysis.h"

#include <algorithm>

namespace nope {

const LayerScores* Analysis::find(CapturePoint point, int layer) const {
    for (const auto& row : rows) {
        if (row.point == point && row.layer == layer) {
            return &row;
        }
    }
    return nullptr;
}

std::string Analysis::nonFiniteMessage() const {
    if (!nonFinite) {
        return {};
    }
    const std::string site =
        nonFinite->point == CapturePoint::Embedding
            ? std::string("the embedding")
            : toString(nonFinite->point) + " layer " + std::to_string(nonFinite->layer);
    return std::string("the hidden states are ") + (nonFinite->nan ? "NaN" : "infinite") +
           " from " + site +
           " on (the first point analysed where they are): the model's values overflow float32, "
           "so no score there or after means anything (try a smaller init-std or init-mean)";
}

int Analysis::layerCount() const {
    int layers = 0;
    for (const auto& row : rows) {
        layers = std::max(layers, row.layer);
    }
    return layers;
}

int AttentionAnalysis::headCount() const {
    int count = 0;
    for (const auto& h : heads) {
        count += h.layer == heads.front().layer ? 1 : 0;
    }
    return count;
}

const HeadAttention* AttentionAnalysis::find(int layer, int head) const {
    for (const auto& h : heads) {
        if (h.layer == layer && h.head == head) {
            return &h;
        }
    }
    return nullptr;
}

}  // namespace nope
