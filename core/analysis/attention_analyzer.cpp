#include <algorithm>

#include "analysis/analyzer.h"

namespace nope {

namespace {

AttentionSums headSums(const torch::Tensor& weights) {
    const auto w = weights.to(torch::kFloat);  // (B, nh, T, T)
    const int64_t T = w.size(2);
    const auto logs = torch::where(w > 0, w.log(), torch::zeros_like(w));
    const auto positions = torch::arange(T, w.options());
    const auto distance = (positions.view({T, 1}) - positions.view({1, T})).clamp_min(0);
    // on the CPU: the sums are read element by element (the model may run on a GPU)
    return {w.sum(0).to(torch::kCPU), (-(w * logs).sum({0, 2, 3})).to(torch::kCPU),
            (w * distance).sum({0, 2, 3}).to(torch::kCPU)};
}

// Each head's means from its sums over `count` prompts of T positions.
std::vector<HeadAttention> headsFrom(const AttentionSums& sums, int layer, int64_t count,
                                     int64_t T) {
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

void AttentionAccumulator::add(const std::vector<torch::Tensor>& weights, int64_t firstPrompt,
                               int keepPrompts) {
    if (m_sums.empty()) {
        m_sums.resize(weights.size());
        m_kept.resize(weights.size());
    }
    for (size_t l = 0; l < weights.size(); ++l) {
        if (!weights[l].defined()) {
            continue;  // a layer that computed no weights (the v_out ablation)
        }
        AttentionSums s = headSums(weights[l]);
        if (m_sums[l].matrix.defined()) {
            s.matrix += m_sums[l].matrix;
            s.entropy += m_sums[l].entropy;
            s.distance += m_sums[l].distance;
        }
        m_sums[l] = std::move(s);
        const int64_t B = weights[l].size(0), heads = weights[l].size(1), T = weights[l].size(2);
        const int64_t keep = std::min<int64_t>(B, std::max<int64_t>(0, keepPrompts - firstPrompt));
        if (keep == 0) {
            continue;
        }
        const auto w = weights[l].slice(0, 0, keep).to(torch::kCPU, torch::kFloat).contiguous();
        m_kept[l].resize(static_cast<size_t>(heads));
        for (int64_t b = 0; b < keep; ++b) {
            for (int64_t h = 0; h < heads; ++h) {
                const float* m = w[b][h].data_ptr<float>();
                m_kept[l][static_cast<size_t>(h)].emplace_back(m, m + T * T);
            }
        }
    }
}

void AttentionAccumulator::add(AttentionAccumulator&& later) {
    if (m_sums.empty()) {
        *this = std::move(later);
        return;
    }
    for (size_t l = 0; l < m_sums.size() && l < later.m_sums.size(); ++l) {
        const AttentionSums& s = later.m_sums[l];
        if (!s.matrix.defined()) {
            continue;
        }
        if (m_sums[l].matrix.defined()) {
            m_sums[l].matrix += s.matrix;
            m_sums[l].entropy += s.entropy;
            m_sums[l].distance += s.distance;
        } else {
            m_sums[l] = s;
        }
        auto& kept = m_kept[l];
        kept.resize(std::max(kept.size(), later.m_kept[l].size()));
        for (size_t h = 0; h < later.m_kept[l].size(); ++h) {
            auto& from = later.m_kept[l][h];
            kept[h].insert(kept[h].end(), std::make_move_iterator(from.begin()),
                           std::make_move_iterator(from.end()));
        }
    }
}

AttentionAnalysis AttentionAccumulator::finish(int64_t count, int64_t T) const {
    AttentionAnalysis out;
    out.samples = static_cast<int>(count);
    out.seqLen = static_cast<int>(T);
    for (size_t l = 0; l < m_sums.size(); ++l) {
        if (!m_sums[l].matrix.defined()) {
            continue;
        }
        auto heads = headsFrom(m_sums[l], static_cast<int>(l) + 1, count, T);
        for (size_t h = 0; h < heads.size() && h < m_kept[l].size(); ++h) {
            heads[h].promptMatrices = m_kept[l][h];
        }
        out.heads.insert(out.heads.end(), heads.begin(), heads.end());
    }
    return out;
}

std::vector<HeadAttention> attentionStatistics(const torch::Tensor& weights, int layer) {
    TORCH_CHECK(weights.dim() == 4 && weights.size(2) == weights.size(3),
                "attention weights must be (B, heads, T, T)");
    return headsFrom(headSums(weights), layer, weights.size(0), weights.size(2));
}

AttentionAnalysis analyzeAttention(GptImpl& model, const torch::Tensor& tokens, int batchSize) {
    AnalysisOptions options;
    options.points = CaptureSet{};
    options.attention = true;
    options.batchSize = batchSize;
    return analyze(model, tokens, options).attention;
}

}  // namespace nope
