#include "mechanism/averaging.h"

#include <algorithm>
#include <cmath>

#include "util/enum_names.h"

namespace nope {

namespace {

constexpr EnumName<AveragingWeights> kWeights[] = {{AveragingWeights::Uniform, "uniform"},
                                                   {AveragingWeights::Random, "random"},
                                                   {AveragingWeights::Model, "model"}};
constexpr EnumName<AveragingInputs> kInputs[] = {{AveragingInputs::Gaussian, "gaussian"},
                                                 {AveragingInputs::Tokens, "tokens"}};

}  // namespace

std::string toString(AveragingWeights weights) {
    return nameOf(kWeights, weights);
}

std::optional<AveragingWeights> parseAveragingWeights(std::string_view text) {
    return parseName(kWeights, text);
}

std::string toString(AveragingInputs inputs) {
    return nameOf(kInputs, inputs);
}

std::optional<AveragingInputs> parseAveragingInputs(std::string_view text) {
    return parseName(kInputs, text);
}

bool needsModel(const AveragingConfig& c) {
    return c.weights == AveragingWeights::Model || c.inputs == AveragingInputs::Tokens;
}

bool closedFormApplies(const AveragingConfig& c) {
    return c.weights == AveragingWeights::Uniform && c.inputs == AveragingInputs::Gaussian &&
           c.causal;
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
