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

int Analysis::layerCount() const {
    int layers = 0;
    for (const auto& row : rows) {
        layers = std::max(layers, row.layer);
    }
    return layers;
}

}  // namespace nope
