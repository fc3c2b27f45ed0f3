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
// high ones approach uniform). model: the attention weights of a model's first layer on real
// prompts, prompt p's in head p mod heads; sample n takes prompt n mod the prompts
// (mechanism/averaging_model.h).
enum class AveragingWeights { Uniform, Random, Model };

// gaussian: independent N(0, 1) entries. tokens: a model's token embeddings of real prompts
// (neither independent nor zero-mean: a prompt repeats tokens), sample n taking prompt n.
enum class AveragingInputs { Gaussian, Tokens };

std::string toString(AveragingWeights weights);
std::optional<AveragingWeights> parseAveragingWeights(std::string_view text);
std::string toString(AveragingInputs inputs);
std::optional<AveragingInputs> parseAveragingInputs(std::string_view text);

struct AveragingConfig {
    int length = 32;  // T: tokens
    int dim = 64;     // d: width of the input vectors (N(0, 1) entries)
    AveragingWeights weights = AveragingWeights::Uniform;
    AveragingInputs inputs = AveragingInputs::Gaussian;
    double temperature = 1.0;  // random weights only
    int samples = 256;         // sequences, each with its own inputs (and weights)
    bool causal = true;        // false: every token averages all tokens, the bidirectional control
    uint64_t seed = 1;
};

// A problem with the settings, naming the flag ("--length: 1 is too short (allowed: 3 to 1024)").
std::optional<std::string> checkAveraging(const AveragingConfig& config);

struct AveragingResult {
    int length = 0;
    int dim = 0;                    // of the inputs averaged
    double adjacencyMean = 0.0;     // over samples, each scored on its own matrix
    double adjacencyStd = 0.0;      // population standard deviation over samples
    std::vector<float> meanMatrix;  // T x T, the mean self-cosine matrix over samples
    double seconds = 0.0;
};

// Throws std::invalid_argument with checkAveraging's message on bad settings, and when the
// settings need a model (weights model, inputs tokens: see mechanism/averaging_model.h).
AveragingResult simulateAveraging(const AveragingConfig& config);

// Whether the settings take weights or inputs from a model.
bool needsModel(const AveragingConfig& config);
// Whether the closed form sqrt(k/m) is the expectation: uniform causal averaging of gaussian
// inputs.
bool closedFormApplies(const AveragingConfig& config);

// The closed form of uniform causal averaging: C[i][j] = sqrt((min + 1) / (max + 1)) with
// 0-based positions, T x T row-major.
std::vector<float> uniformAveragingCosine(int length);

// The largest |a - b| over the lower triangle (the diagonal included) of two T x T matrices.
double largestLowerDifference(const std::vector<float>& a, const std::vector<float>& b, int length);

}  // namespace nope
