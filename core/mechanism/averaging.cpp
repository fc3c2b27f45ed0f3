#include "mechanism/averaging.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "analysis/adjacency.h"

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

}  // namespace

AveragingResult simulateAveraging(const AveragingConfig& c) {
    if (auto problem = checkAveraging(c)) {
        throw std::invalid_argument(*problem);
    }
    const auto start = std::chrono::steady_clock::now();
    torch::NoGradGuard noGrad;
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(c.seed);
    const int64_t N = c.samples, T = c.length;
    const auto inputs = torch::empty({N, T, int64_t{c.dim}}).normal_(0.0, 1.0, generator);
    const auto outputs = torch::bmm(averagingWeights(c, generator), inputs);  // (N, T, d)
    const auto unit = outputs / outputs.norm(2, -1, /*keepdim=*/true).clamp_min(1e-12);
    const auto cosine = torch::bmm(unit, unit.transpose(1, 2)).contiguous();  // (N, T, T)

    AveragingResult result;
    result.length = c.length;
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
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace nope
