// The geometry of positions: hidden states projected to three dimensions, per capture point and
// layer. Value types only (no LibTorch), for the CLI's files and the window's projector.
//   pca  principal components of every hidden vector of the projected prompts, each prompt
//        centred on its own mean first (one fit per point and layer, shared by all prompts:
//        their points share axes, which show how tokens spread within a prompt, not how prompts
//        differ)
//   mds  classical multidimensional scaling of each prompt's cosine dissimilarity 1 - C (C its
//        self-cosine matrix): the positions laid out by similarity alone, one fit per prompt
// Each axis is signed so that it rises with position (its Pearson R with position is >= 0);
// explained[i] is the share of the total variance (pca) or of the positive eigenvalues (mds) on
// axis i; rPosition is the Pearson R between axis 1 and position (mds: the mean over prompts).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/capture_point.h"

namespace nope {

enum class ProjectionMethod { Pca, Mds };

std::string toString(ProjectionMethod method);
std::optional<ProjectionMethod> parseProjectionMethod(std::string_view s);
const std::vector<std::string>& projectionMethodNames();  // "pca", "mds"

inline constexpr int kProjectionAxes = 3;

struct Projection {
    CapturePoint point = CapturePoint::Embedding;
    int layer = 0;
    ProjectionMethod method = ProjectionMethod::Pca;
    std::array<double, kProjectionAxes> explained{};
    double rPosition = 0.0;
    int prompts = 0;            // projected prompts
    int seqLen = 0;             // T
    std::vector<float> coords;  // prompts x T x 3: prompt-major, then position, then axis

    float at(int prompt, int position, int axis) const {
        return coords[(static_cast<size_t>(prompt) * seqLen + position) * kProjectionAxes + axis];
    }
};

// The projections of one analysis, with the tokens of the projected prompts (prompts x T ids;
// empty when the inputs were not tokens).
struct ProjectionSet {
    int prompts = 0;
    int seqLen = 0;
    std::vector<int> tokens;
    std::vector<Projection> items;  // point-major, then layer, then method

    bool empty() const { return items.empty(); }
    const Projection* find(CapturePoint point, int layer, ProjectionMethod method) const;
};

}  // namespace nope
