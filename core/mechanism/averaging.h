// The averaging effect without a model: random input vectors averaged over positions by causal
// attention weights that no training made, and the self-cosine matrix of the averages. Token m's
// output is a weighted average of the inputs 1..m, so neighbours share almost all their inputs:
// for uniform weights and independent zero-mean inputs the expected cosine between positions
// k < m is sqrt(k/m), a matrix whose every triple counts (adjacency score 1). No LibTorch in this
// header: the window's Mechanism tab and the CLI share the value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nope {

// uniform: equal weights over the tokens averaged. random: softmax of N(0, 1) scores divided by
// the temperature, drawn afresh for every sample (low temperatures approach one token each,
// high ones approach uniform).
enum class AveragingWeights { Uniform, Random };

std::string toString(AveragingWeights weights);
std::optional<AveragingWeights> parseAveragingWeights(std::string_view text);

struct AveragingConfig {
    int length = 32;  // T: tokens
    int dim = 64;     // d: width of the input vectors (N(0, 1) entries)
    AveragingWeights weights = AveragingWeights::Uniform;
    double temperature = 1.0;  // random weights only
    int samples = 256;         // sequences, each with its own inputs (and weights)
    bool causal = true;        // false: every token averages all tokens, the bidirectional control
    uint64_t seed = 1;
};

// A problem with the settings, naming the flag ("--length: 1 is too short (allowed: 3 to 1024)").
std::optional<std::string> checkAveraging(const AveragingConfig& config);

struct AveragingResult {
    int length = 0;
    double adjacencyMean = 0.0;     // over samples, each scored on its own matrix
    double adjacencyStd = 0.0;      // population standard deviation over samples
    std::vector<float> meanMatrix;  // T x T, the mean self-cosine matrix over samples
    double seconds = 0.0;
};

// Throws std::invalid_argument with checkAveraging's message on bad settings.
AveragingResult simulateAveraging(const AveragingConfig& config);

// The closed form of uniform causal averaging: C[i][j] = sqrt((min + 1) / (max + 1)) with
// 0-based positions, T x T row-major.
std::vector<float> uniformAveragingCosine(int length);

// The largest |a - b| over the lower triangle (the diagonal included) of two T x T matrices.
double largestLowerDifference(const std::vector<float>& a, const std::vector<float>& b, int length);

}  // namespace nope
