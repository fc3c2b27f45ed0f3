// Position probes: how much of a token's position a small regressor can read from its hidden
// state. The settings of one probe run, as the authors ran it (their public notebook), with the
// options a researcher wants around it. No LibTorch here, so the window's form can use it.
//
// Features and targets (one probe per capture point, layer and feature):
//   vector      the hidden vector (d numbers)                       -> position p in 0..T-1
//   variance    its variance across the d dimensions (one number)   -> position p
//   norm        its L2 norm (one number)                            -> position p
//   cosine      its cosine similarity to the sequence's last token  -> distance to it, T-1-p
//   cosine_row  its row of the self-cosine matrix (T numbers, future tokens 0) -> position p
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/capture_point.h"
#include "util/field_error.h"

namespace nope {

enum class ProbeFeature { Vector, Variance, Norm, Cosine, CosineRow };
enum class ProbeData { Random, Task };  // random strings over two character sets, or task prompts
enum class ProbeActivation { Selu, Exp, Relu, Gelu, Identity };
enum class ProbePrecision { Fp32, Bf16 };

const std::vector<ProbeFeature>& allProbeFeatures();
std::string toString(ProbeFeature feature);
std::optional<ProbeFeature> parseProbeFeature(std::string_view s);
std::string toString(ProbeData data);
std::optional<ProbeData> parseProbeData(std::string_view s);
std::string toString(ProbeActivation activation);
std::optional<ProbeActivation> parseProbeActivation(std::string_view s);
std::string toString(ProbePrecision precision);
std::optional<ProbePrecision> parseProbePrecision(std::string_view s);

// What the probe of a feature predicts: "position" or "distance_to_last".
std::string probeTarget(ProbeFeature feature);

struct ProbeConfig {
    // What is probed.
    std::vector<CapturePoint> points = {CapturePoint::Embedding, CapturePoint::Attn};
    std::vector<ProbeFeature> features = allProbeFeatures();
    // The probe data.
    ProbeData data = ProbeData::Random;  // random: strings over the two character sets below
    int length = 16;                     // characters per random string (T)
    std::string trainChars = "5678";     // characters of the strings the probe trains on
    std::string testChars = "1234";      // characters of the strings it is tested on (disjoint)
    int trainStrings = 1000;             // strings (or task prompts) to train on
    int testStrings = 500;               // strings (or task prompts) to test on
    // The probe network: Linear layers with these hidden widths, an activation between each
    // pair; no hidden widths is a linear probe.
    std::vector<int> hidden = {512, 384, 128};
    std::vector<ProbeActivation> activations = {ProbeActivation::Selu, ProbeActivation::Exp,
                                                ProbeActivation::Selu};
    // Training: MSE loss, AdamW (PyTorch's defaults but for lr and weight decay).
    int epochs = 20;             // passes over the training strings
    int batchStrings = 128;      // strings per batch (every position of each)
    double learningRate = 1e-3;  // AdamW learning rate
    double weightDecay = 0.01;   // AdamW weight decay, on every probe parameter
    ProbePrecision precision = ProbePrecision::Fp32;  // matrix products of the probe
    bool controls = true;                             // also train each probe on shuffled targets
    bool standardize = false;  // scale each input to zero mean, unit variance (training strings)
    uint64_t seed = 0;         // probe weights, batch order, random strings, control shuffle
    int keepPredictions = 64;  // test strings whose predictions are kept (for scatter plots)
};

// The authors' probe (4 Linear layers, 20 epochs), in fp32 like every preset: bf16 is 2.5 times
// faster but moves single probes' R by up to 0.018 (docs/performance.md, "Probes"), so it is an
// option.
ProbeConfig fullProbeConfig();
// A cheaper probe for the live view during training (smaller MLP, fewer strings), tested to
// agree with the full one within 0.05 in R on the default model.
ProbeConfig fastProbeConfig();
// "full" or "fast"; nothing for another name.
std::optional<ProbeConfig> probePreset(std::string_view name);
// The preset whose network and training `config` has ("fast", "full"), else "custom".
std::string probePresetName(const ProbeConfig& config);

// Every problem with the config, each naming its setting; empty when valid. `blockSize` is the
// model's context. Defined with the table of settings (settings/validate.cpp), as is the JSON.
FieldErrors validate(const ProbeConfig& config, int blockSize);

// The sequence length the probe sees: `length` for random strings, `taskLength` for prompts.
int probeSequenceLength(const ProbeConfig& config, int taskLength);

void to_json(nlohmann::json& j, const ProbeConfig& config);
// Reads the keys present over the defaults; throws std::invalid_argument naming a bad key.
void from_json(const nlohmann::json& j, ProbeConfig& config);

}  // namespace nope
