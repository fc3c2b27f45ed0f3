// The configuration of the NoPE GPT: a plain aggregate with nanoGPT's defaults, validated once
// where it enters (flags, form, JSON). No LibTorch here, so the window's form can use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "util/field_error.h"

namespace nope {

enum class PositionalEncoding { None, Learned, Sinusoidal };
enum class AttentionKind { Causal, Bidirectional };
enum class InitScheme { Default, Normal };

struct InitConfig {
    InitScheme scheme = InitScheme::Default;  // default: nanoGPT's; normal: N(mean, std) everywhere
    double mean = 0.0;                        // mean of the `normal` scheme
    double std = 0.02;                        // standard deviation of the `normal` scheme (> 0)
};

struct ModelConfig {
    int vocabSize = 96;    // the character vocabulary (fixed by the tasks)
    int blockSize = 256;   // context length: longest sequence the model accepts
    int nLayer = 6;        // transformer blocks
    int nHead = 6;         // attention heads per block
    int nEmbd = 384;       // width of the residual stream
    double dropout = 0.2;  // dropout on attention weights, residual branches and embeddings
    bool bias = false;     // biases in Linear layers and LayerNorms
    PositionalEncoding positional = PositionalEncoding::None;  // none is the object of study
    AttentionKind attention = AttentionKind::Causal;           // bidirectional is the control
    InitConfig init;                                           // how weights are drawn
};

std::string toString(PositionalEncoding pe);
std::string toString(AttentionKind kind);
std::string toString(InitScheme scheme);
std::optional<PositionalEncoding> parsePositional(std::string_view s);
std::optional<AttentionKind> parseAttention(std::string_view s);
std::optional<InitScheme> parseInitScheme(std::string_view s);

// Every problem with the config, each naming its setting; empty when valid. Defined with the
// table of settings (settings/validate.cpp), as are the JSON functions below.
FieldErrors validate(const ModelConfig& config);

// Number of distinct parameters (the tied output head counted once).
int64_t parameterCount(const ModelConfig& config);

// JSON with nanoGPT's key names (n_layer, n_head, n_embd, block_size, ...), the table's paths.
void to_json(nlohmann::json& j, const ModelConfig& config);
// Reads the keys present over the defaults; throws std::invalid_argument naming a bad key.
void from_json(const nlohmann::json& j, ModelConfig& config);

}  // namespace nope
