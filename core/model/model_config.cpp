#include "model/model_config.h"

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

int64_t parameterCount(const ModelConfig& c) {
    const int64_t d = c.nEmbd;
    const int64_t norm = c.bias ? 2 * d : d;  // LayerNorm weight (and bias)
    const int64_t attn = d * 3 * d + d * d + (c.bias ? 3 * d + d : 0);
    const int64_t mlp = d * 4 * d + 4 * d * d + (c.bias ? 4 * d + d : 0);
    const int64_t block = 2 * norm + attn + mlp;
    const int64_t wpe = c.positional == PositionalEncoding::Learned ? int64_t{c.blockSize} * d : 0;
    return int64_t{c.vocabSize} * d + wpe + c.nLayer * block + norm;
}

}  // namespace nope
