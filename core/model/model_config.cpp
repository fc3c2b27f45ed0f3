#include "model/model_config.h"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "util/enum_names.h"

namespace nope {

namespace {

constexpr EnumName<PositionalEncoding> kPositional[] = {
    {PositionalEncoding::None, "none"},
    {PositionalEncoding::Learned, "learned"},
    {PositionalEncoding::Sinusoidal, "sinusoidal"}};
constexpr EnumName<AttentionKind> kAttention[] = {{AttentionKind::Causal, "causal"},
                                                  {AttentionKind::Bidirectional, "bidirectional"}};
constexpr EnumName<InitScheme> kInit[] = {{InitScheme::Default, "default"},
                                          {InitScheme::Normal, "normal"}};

template <typename Enum>
Enum enumFromJson(const nlohmann::json& j, const char* key,
                  std::optional<Enum> (*parse)(std::string_view), const char* allowed) {
    const std::string s = j.at(key).get<std::string>();
    if (auto v = parse(s)) {
        return *v;
    }
    throw std::invalid_argument(std::string(key) + ": '" + s + "' is not one of " + allowed);
}

}  // namespace

std::string toString(PositionalEncoding pe) {
    return nameOf(kPositional, pe);
}
std::string toString(AttentionKind kind) {
    return nameOf(kAttention, kind);
}
std::string toString(InitScheme scheme) {
    return nameOf(kInit, scheme);
}
std::optional<PositionalEncoding> parsePositional(std::string_view s) {
    return parseName(kPositional, s);
}
std::optional<AttentionKind> parseAttention(std::string_view s) {
    return parseName(kAttention, s);
}
std::optional<InitScheme> parseInitScheme(std::string_view s) {
    return parseName(kInit, s);
}

FieldErrors validate(const ModelConfig& c) {
    FieldErrors errors;
    auto check = [&](bool ok, const char* field, std::string message) {
        if (!ok) {
            errors.push_back({field, std::move(message)});
        }
    };
    check(c.nLayer >= 1 && c.nLayer <= 48, "layers",
          std::to_string(c.nLayer) + " is outside the allowed 1 to 48");
    check(c.nHead >= 1 && c.nHead <= 64, "heads",
          std::to_string(c.nHead) + " is outside the allowed 1 to 64");
    check(c.nEmbd >= 1 && c.nEmbd <= 4096, "dim",
          std::to_string(c.nEmbd) + " is outside the allowed 1 to 4096");
    if (c.nHead >= 1 && c.nEmbd >= 1) {
        check(c.nEmbd % c.nHead == 0, "dim",
              std::to_string(c.nEmbd) + " is not divisible by --heads (" + std::to_string(c.nHead) +
                  "); allowed: multiples of the head count");
    }
    check(c.blockSize >= 2 && c.blockSize <= 4096, "context",
          std::to_string(c.blockSize) + " is outside the allowed 2 to 4096");
    check(c.vocabSize >= 2, "vocab", "must be at least 2");
    check(c.dropout >= 0.0 && c.dropout < 1.0, "dropout",
          std::to_string(c.dropout) + " is outside the allowed [0, 1)");
    check(std::isfinite(c.init.mean), "init-mean", "must be a finite number");
    check(std::isfinite(c.init.std) && c.init.std > 0.0, "init-std",
          "must be a number greater than 0");
    return errors;
}

int64_t parameterCount(const ModelConfig& c) {
    const int64_t d = c.nEmbd;
    const int64_t norm = c.bias ? 2 * d : d;  // LayerNorm weight (and bias)
    const int64_t attn = d * 3 * d + d * d + (c.bias ? 3 * d + d : 0);
    const int64_t mlp = d * 4 * d + 4 * d * d + (c.bias ? 4 * d + d : 0);
    const int64_t block = 2 * norm + attn + mlp;
    const int64_t wpe = c.positional == PositionalEncoding::Learned ? int64_t{c.blockSize} * d : 0;
    return int64_t{c.vocabSize} * d + wpe + c.nLayer * block + norm;
}

void to_json(nlohmann::json& j, const ModelConfig& c) {
    j = nlohmann::json{
        {"vocab_size", c.vocabSize},
        {"block_size", c.blockSize},
        {"n_layer", c.nLayer},
        {"n_head", c.nHead},
        {"n_embd", c.nEmbd},
        {"dropout", c.dropout},
        {"bias", c.bias},
        {"positional", toString(c.positional)},
        {"attention", toString(c.attention)},
        {"init",
         {{"scheme", toString(c.init.scheme)}, {"mean", c.init.mean}, {"std", c.init.std}}}};
}

void from_json(const nlohmann::json& j, ModelConfig& c) {
    try {
        c.vocabSize = j.value("vocab_size", c.vocabSize);
        c.blockSize = j.value("block_size", c.blockSize);
        c.nLayer = j.value("n_layer", c.nLayer);
        c.nHead = j.value("n_head", c.nHead);
        c.nEmbd = j.value("n_embd", c.nEmbd);
        c.dropout = j.value("dropout", c.dropout);
        c.bias = j.value("bias", c.bias);
        if (j.contains("positional")) {
            c.positional = enumFromJson<PositionalEncoding>(j, "positional", parsePositional,
                                                            "none, learned, sinusoidal");
        }
        if (j.contains("attention")) {
            c.attention = enumFromJson<AttentionKind>(j, "attention", parseAttention,
                                                      "causal, bidirectional");
        }
        if (j.contains("init")) {
            const auto& init = j.at("init");
            if (init.contains("scheme")) {
                c.init.scheme =
                    enumFromJson<InitScheme>(init, "scheme", parseInitScheme, "default, normal");
            }
            c.init.mean = init.value("mean", c.init.mean);
            c.init.std = init.value("std", c.init.std);
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("model config: ") + e.what());
    }
}

}  // namespace nope
