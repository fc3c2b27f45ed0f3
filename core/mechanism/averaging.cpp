#include "mechanism/averaging.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "analysis/adjacency.h"
#include "util/enum_names.h"

namespace nope {

namespace {

constexpr EnumName<AveragingWeights> kWeights[] = {{AveragingWeights::Uniform, "uniform"},
                                                   {AveragingWeights::Random, "random"}};

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

std::string toString(AveragingWeights weights) {
    return nameOf(kWeights, weights);
}

std::optional<AveragingWeights> parseAveragingWeights(std::string_view text) {
    return parseName(kWeights, text);
}

std::optional<std::string> checkAveraging(const AveragingConfig& c) {
    if (c.length < 3 || c.length > 1024) {
        return "--length: " + std::to_string(c.length) +
               " tokens (allowed: 3 to 1024; a score needs three)";
    }
    if (c.dim < 1 || c.dim > 65536) {
        return "--dim: " + std::to_string(c.dim) + " (allowed: 1 to 65536)";
    }
    if (c.samples < 1 || c.samples > 100000) {
        return "--samples: " + std::to_string(c.samples) + " (allowed: 1 to 100000)";
    }
    if (!(c.temperature > 0.0) || !std::isfinite(c.temperature)) {
        return "--temperature: " + std::to_string(c.temperature) + " (allowed: a number above 0)";
    }
    if (int64_t{c.samples} * c.length * (c.length + c.dim) > (int64_t{1} << 31)) {
        return "--samples: " + std::to_string(c.samples) + " sequences of " +
               std::to_string(c.length) + " x " + std::to_string(c.dim) +
               " are too many at once (allowed: samples x length x (length + dim) up to 2^31)";
    }
    return std::nullopt;
}

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

std::vector<float> uniformAveragingCosine(int length) {
    std::vector<float> c(static_cast<size_t>(length) * length);
    for (int i = 0; i < length; ++i) {
        for (int j = 0; j < length; ++j) {
            const double lo = std::min(i, j) + 1.0, hi = std::max(i, j) + 1.0;
            c[static_cast<size_t>(i) * length + j] = static_cast<float>(std::sqrt(lo / hi));
        }
    }
    return c;
}

double largestLowerDifference(const std::vector<float>& a, const std::vector<float>& b,
                              int length) {
    double most = 0.0;
    for (int i = 0; i < length; ++i) {
        for (int j = 0; j <= i; ++j) {
            const size_t at = static_cast<size_t>(i) * length + j;
            most = std::max(most, std::fabs(double(a[at]) - double(b[at])));
        }
    }
    return most;
}

}  // namespace nope
