#include "mechanism/averaging.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "analysis/adjacency.h"
#include "analysis/analyzer.h"
#include "mechanism/averaging_model.h"
#include "util/stopwatch.h"

namespace nope {

namespace {

// The weights of every sample, (N, T, T) with rows summing to 1 over the tokens each averages.
torch::Tensor averagingWeights(const AveragingConfig& c, at::Generator& generator) {
    const int64_t N = c.samples, T = c.length;
    const auto allowed = c.causal ? torch::ones({T, T}).tril() : torch::ones({T, T});
    if (c.weights == AveragingWeights::Uniform) {
        auto w = allowed / allowed.sum(-1, /*keepdim=*/true);
        return w.unsqueeze(0).expand({N, T, T});
    }
    auto scores = torch::empty({N, T, T}).normal_(0.0, 1.0, generator) / c.temperature;
    scores = scores.masked_fill(allowed.unsqueeze(0) == 0, -std::numeric_limits<float>::infinity());
    return torch::softmax(scores, -1);
}

// The scores of the averages weights (N, T, T) x inputs (N, T, d).
AveragingResult scoreAverages(const AveragingConfig& c, const torch::Tensor& weights,
                              const torch::Tensor& inputs,
                              std::chrono::steady_clock::time_point start) {
    const int64_t N = weights.size(0), T = weights.size(1);
    const auto outputs = torch::bmm(weights, inputs);  // (N, T, d)
    const auto unit = outputs / outputs.norm(2, -1, /*keepdim=*/true).clamp_min(1e-12);
    const auto cosine = torch::bmm(unit, unit.transpose(1, 2)).contiguous();  // (N, T, T)

    AveragingResult result;
    result.length = c.length;
    result.dim = static_cast<int>(inputs.size(2));
    std::vector<double> scores(static_cast<size_t>(N));
    const float* m = cosine.data_ptr<float>();
    for (int64_t n = 0; n < N; ++n) {
        scores[static_cast<size_t>(n)] = adjacencyScore(m + n * T * T, c.length);
    }
    const MeanStd ms = meanStd(scores);
    result.adjacencyMean = ms.mean;
    result.adjacencyStd = ms.std;
    const auto mean = cosine.mean(0).contiguous();
    result.meanMatrix.assign(mean.data_ptr<float>(), mean.data_ptr<float>() + T * T);
    result.seconds = secondsSince(start);
    return result;
}

// Rows n = 0..N-1 of `material`, taking row n mod its size.
torch::Tensor cycled(const torch::Tensor& material, int64_t N) {
    const auto rows = torch::arange(N, torch::kLong).remainder(material.size(0));
    return material.index_select(0, rows).to(torch::kFloat).contiguous();
}

}  // namespace

AveragingResult simulateAveraging(const AveragingConfig& c) {
    if (needsModel(c)) {
        throw std::invalid_argument(
            "--weights model and --inputs tokens need a model (see mechanism/averaging_model.h)");
    }
    return simulateAveraging(c, ModelMaterial{});
}

AveragingResult simulateAveraging(const AveragingConfig& c, const ModelMaterial& material) {
    if (auto problem = checkAveraging(c)) {
        throw std::invalid_argument(*problem);
    }
    const bool modelWeights = c.weights == AveragingWeights::Model;
    const bool tokenInputs = c.inputs == AveragingInputs::Tokens;
    const torch::Tensor& taken = modelWeights ? material.weights : material.embeddings;
    if ((modelWeights && !material.weights.defined()) ||
        (tokenInputs && !material.embeddings.defined())) {
        throw std::invalid_argument("the settings need a model's weights or embeddings");
    }
    if ((modelWeights || tokenInputs) && taken.size(1) != c.length) {
        throw std::invalid_argument("--length: " + std::to_string(c.length) +
                                    " differs from the prompts' " + std::to_string(taken.size(1)) +
                                    " tokens");
    }
    if (tokenInputs && material.embeddings.size(2) != c.dim) {
        throw std::invalid_argument("--dim: " + std::to_string(c.dim) + " differs from the " +
                                    "model's width " + std::to_string(material.embeddings.size(2)));
    }
    const auto start = std::chrono::steady_clock::now();
    torch::NoGradGuard noGrad;
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(c.seed);
    const int64_t N = c.samples, T = c.length;
    const auto inputs = tokenInputs
                            ? cycled(material.embeddings, N)
                            : torch::empty({N, T, int64_t{c.dim}}).normal_(0.0, 1.0, generator);
    const auto weights =
        modelWeights ? cycled(material.weights, N) : averagingWeights(c, generator);
    return scoreAverages(c, weights, inputs, start);
}

ModelMaterial modelMaterial(GptImpl& model, const torch::Tensor& tokens) {
    EvalScope scope(model);
    const int64_t N = tokens.size(0);
    std::vector<torch::Tensor> weights;
    for (int64_t start = 0; start < N; start += 256) {  // bounded memory: every layer's weights
        const auto chunk = tokens.slice(0, start, std::min(N, start + 256));
        HiddenStates states;
        states.attentionWeights = true;
        model.forward(chunk, &states, Head::None);
        const auto& w = states.weights.at(0);  // (B, nh, T, T)
        const auto rows = torch::arange(start, start + chunk.size(0), torch::kLong);
        const auto head = rows.remainder(w.size(1)).to(w.device());
        weights.push_back(
            w.index({torch::arange(chunk.size(0), head.options()), head}).to(torch::kCPU));
    }
    ModelMaterial m;
    m.weights = torch::cat(weights, 0).contiguous();  // (N, T, T): prompt n in head n mod heads
    m.embeddings = model.transformer->wte(tokens).to(torch::kCPU).contiguous();
    return m;
}

}  // namespace nope
