#include <algorithm>

#include "analysis/analyzer.h"

namespace nope {

namespace {

// Per head of one batch: the sum over prompts of the weights (nh, T, T), of the row entropies
// and of the row distances, each summed over rows too.
struct HeadSums {
    torch::Tensor matrix;   // (nh, T, T)
    torch::Tensor entropy;  // (nh)
    torch::Tensor distance;
};

HeadSums headSums(const torch::Tensor& weights) {
    const auto w = weights.to(torch::kFloat);  // (B, nh, T, T)
    const int64_t T = w.size(2);
    const auto logs = torch::where(w > 0, w.log(), torch::zeros_like(w));
    const auto positions = torch::arange(T, w.options());
    const auto distance = (positions.view({T, 1}) - positions.view({1, T})).clamp_min(0);
    return {w.sum(0), -(w * logs).sum({0, 2, 3}), (w * distance).sum({0, 2, 3})};
}

// Each head's means from its sums over `count` prompts of T positions.
std::vector<HeadAttention> headsFrom(const HeadSums& sums, int layer, int64_t count, int64_t T) {
    std::vector<HeadAttention> out;
    for (int64_t h = 0; h < sums.matrix.size(0); ++h) {
        HeadAttention a;
        a.layer = layer;
        a.head = static_cast<int>(h);
        a.entropy = sums.entropy[h].item<double>() / double(count * T);
        a.meanDistance = sums.distance[h].item<double>() / double(count * T);
        const auto mean = (sums.matrix[h] / double(count)).contiguous();
        a.meanMatrix.assign(mean.data_ptr<float>(), mean.data_ptr<float>() + T * T);
        out.push_back(std::move(a));
    }
    return out;
}

}  // namespace

std::vector<HeadAttention> attentionStatistics(const torch::Tensor& weights, int layer) {
    TORCH_CHECK(weights.dim() == 4 && weights.size(2) == weights.size(3),
                "attention weights must be (B, heads, T, T)");
    return headsFrom(headSums(weights), layer, weights.size(0), weights.size(2));
}

AttentionAnalysis analyzeAttention(GptImpl& model, const torch::Tensor& tokens, int batchSize) {
    TORCH_CHECK((tokens.dim() == 2 || tokens.dim() == 3) && tokens.size(0) >= 1,
                "analysis needs tokens (N, T) or inputs (N, T, C)");
    EvalScope scope(model);
    const int64_t N = tokens.size(0), T = tokens.size(1);
    const size_t L = static_cast<size_t>(model.config().nLayer);
    std::vector<HeadSums> total(L);
    const int64_t batch = std::max(1, batchSize);
    for (int64_t start = 0; start < N; start += batch) {
        HiddenStates states;
        states.attentionWeights = true;
        forwardAny(model, tokens.slice(0, start, std::min(N, start + batch)), states);
        for (size_t l = 0; l < L; ++l) {
            HeadSums s = headSums(states.weights[l]);
            if (!total[l].matrix.defined()) {
                total[l] = std::move(s);
                continue;
            }
            total[l].matrix += s.matrix;
            total[l].entropy += s.entropy;
            total[l].distance += s.distance;
        }
    }
    AttentionAnalysis out;
    out.samples = static_cast<int>(N);
    out.seqLen = static_cast<int>(T);
    for (size_t l = 0; l < L; ++l) {
        const auto heads = headsFrom(total[l], static_cast<int>(l) + 1, N, T);
        out.heads.insert(out.heads.end(), heads.begin(), heads.end());
    }
    return out;
}

}  // namespace nope
