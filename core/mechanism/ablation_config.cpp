#include <cmath>

#include "mechanism/ablation.h"
#include "util/enum_names.h"
#include "util/format.h"

namespace nope {

namespace {

constexpr EnumName<Ablation> kAblations[] = {
    {Ablation::Softmax, "softmax"}, {Ablation::NoDiv, "nodiv"},
    {Ablation::DivSum, "divsum"},   {Ablation::Abs, "abs"},
    {Ablation::Relu, "relu"},       {Ablation::Gelu, "gelu"},
    {Ablation::Sigmoid, "sigmoid"}, {Ablation::Uniform, "uniform"},
    {Ablation::NoQ, "no_q"},        {Ablation::NoK, "no_k"},
    {Ablation::NoV, "no_v"},        {Ablation::ShrinkX, "shrink_x"},
    {Ablation::VOut, "v_out"},      {Ablation::Eqx, "eqx"},
    {Ablation::Randx, "randx"},     {Ablation::Constant, "constant"}};

}  // namespace

const std::vector<Ablation>& allAblations() {
    static const std::vector<Ablation> all = [] {
        std::vector<Ablation> out;
        for (const auto& entry : kAblations) {
            out.push_back(entry.value);
        }
        return out;
    }();
    return all;
}

std::vector<std::string> ablationNames() {
    std::vector<std::string> out;
    for (const auto& entry : kAblations) {
        out.emplace_back(entry.name);
    }
    return out;
}

std::string toString(Ablation ablation) {
    return nameOf(kAblations, ablation);
}

std::optional<Ablation> parseAblation(std::string_view name) {
    return parseName(kAblations, name);
}

std::string describeAblation(Ablation ablation, bool asAuthors) {
    const char* rowSum = asAuthors ? ", future tokens included (f(0) for each)" : "";
    switch (ablation) {
        case Ablation::Softmax:
            return "the model's own attention: softmax of the scaled scores";
        case Ablation::NoDiv:
            return "the scaled scores themselves as weights, no normalisation";
        case Ablation::DivSum:
            return "the scaled scores divided by their row sum";
        case Ablation::Abs:
            return std::string("|score|, divided by the row sum") + rowSum;
        case Ablation::Relu:
            return std::string("relu(score), divided by the row sum") + rowSum;
        case Ablation::Gelu:
            return std::string("gelu(score), divided by the row sum") + rowSum;
        case Ablation::Sigmoid:
            return std::string("sigmoid(score), divided by the row sum") + rowSum;
        case Ablation::Uniform:
            return asAuthors ? "equal weights on all T tokens, future ones included"
                             : "equal weights on the earlier tokens and the token itself";
        case Ablation::NoQ:
            return "the query is the attention's input x, not its projection";
        case Ablation::NoK:
            return "the key is the attention's input x, not its projection";
        case Ablation::NoV:
            return "the value is the attention's input x, not its projection";
        case Ablation::ShrinkX:
            return "q = k = v = x / S, no projections";
        case Ablation::VOut:
            return "the attention returns its input x (no averaging at all)";
        case Ablation::Eqx:
            return "inputs: equally spaced unit vectors x 0.05 in place of the embeddings";
        case Ablation::Randx:
            return "inputs: uniform [0, 1) random vectors in place of the embeddings";
        case Ablation::Constant:
            return "inputs: one uniform random vector repeated at every position";
    }
    return "?";
}

bool replacesInputs(Ablation ablation) {
    return ablation == Ablation::Eqx || ablation == Ablation::Randx ||
           ablation == Ablation::Constant;
}

AttentionVariant variantOf(Ablation ablation, const AblationConfig& config) {
    AttentionVariant v;
    v.asAuthors = config.asAuthors;
    switch (ablation) {
        case Ablation::NoDiv:
            v.norm = AttentionNorm::NoDiv;
            break;
        case Ablation::DivSum:
            v.norm = AttentionNorm::DivSum;
            break;
        case Ablation::Abs:
            v.norm = AttentionNorm::Abs;
            break;
        case Ablation::Relu:
            v.norm = AttentionNorm::Relu;
            break;
        case Ablation::Gelu:
            v.norm = AttentionNorm::Gelu;
            break;
        case Ablation::Sigmoid:
            v.norm = AttentionNorm::Sigmoid;
            break;
        case Ablation::Uniform:
            v.norm = AttentionNorm::Uniform;
            break;
        case Ablation::NoQ:
            v.noQ = true;
            break;
        case Ablation::NoK:
            v.noK = true;
            break;
        case Ablation::NoV:
            v.noV = true;
            break;
        case Ablation::ShrinkX:
            v.shrinkX = config.shrinkX;
            break;
        case Ablation::VOut:
            v.inputOut = true;
            break;
        default:  // softmax and the input ablations: the model's own attention
            break;
    }
    return v;
}

std::optional<std::string> checkAblations(const AblationConfig& config, int seqLen, int width) {
    if (config.ablations.empty()) {
        return "--ablations: none chosen (allowed: " + namesJoined(kAblations) + ")";
    }
    if (!(config.shrinkX > 0.0) || !std::isfinite(config.shrinkX)) {
        return "--shrink-x: " + shortest(static_cast<float>(config.shrinkX)) +
               " (allowed: a number above 0)";
    }
    if (config.points.points().empty()) {
        return std::string("--point: none chosen (allowed: a capture point)");
    }
    for (Ablation a : config.ablations) {
        if (a == Ablation::Eqx && seqLen > width) {
            return "--ablations: eqx needs a dimension per token, and the prompts have " +
                   std::to_string(seqLen) + " tokens for " + std::to_string(width) +
                   " dimensions (allowed: eqx with a model at least as wide as the prompts are "
                   "long)";
        }
    }
    return std::nullopt;
}

const AblationResult* AblationTable::find(Ablation ablation) const {
    for (const auto& r : results) {
        if (r.ablation == ablation) {
            return &r;
        }
    }
    return nullptr;
}

std::string ablationsCsv(const AblationTable& table) {
    std::string csv = "ablation,point,layer,adjacency_mean,adjacency_std\n";
    for (const auto& r : table.results) {
        for (const auto& row : r.analysis.rows) {
            csv += toString(r.ablation) + "," + toString(row.point) + "," +
                   std::to_string(row.layer) + "," + fixed(row.adjacencyMean, 6) + "," +
                   fixed(row.adjacencyStd, 6) + "\n";
        }
    }
    return csv;
}

}  // namespace nope
