#include "cli/model_flags.h"

namespace nope::cli {

ModelFlags::ModelFlags(const ModelConfig& defaults)
    : m_config(defaults),
      m_positional(toString(defaults.positional)),
      m_attention(toString(defaults.attention)),
      m_init(toString(defaults.init.scheme)) {}

void ModelFlags::addTo(FlagSet& flags) {
    flags.addInt("layers", &m_config.nLayer, "transformer blocks", 1, 48);
    flags.addInt("dim", &m_config.nEmbd, "width of the residual stream (a multiple of --heads)", 1,
                 4096);
    flags.addInt("heads", &m_config.nHead, "attention heads per block", 1, 64);
    flags.addInt("context", &m_config.blockSize, "context length in tokens", 2, 4096);
    flags.addDouble("dropout", &m_config.dropout, "dropout probability (training only)", 0.0, 0.99);
    flags.addSwitch("bias", &m_config.bias, "biases in Linear layers and LayerNorms");
    flags.addChoice("pe", &m_positional, "positional encoding", {"none", "learned", "sinusoidal"});
    flags.addChoice("attention", &m_attention, "attention mask", {"causal", "bidirectional"});
    flags.addChoice("init", &m_init,
                    "weight init: nanoGPT's, or N(mean, std) for every non-LayerNorm weight",
                    {"default", "normal"});
    flags.addDouble("init-mean", &m_config.init.mean, "mean of --init normal");
    flags.addDouble("init-std", &m_config.init.std, "standard deviation of --init normal (> 0)");
}

std::optional<std::string> ModelFlags::build(const FlagSet& flags, ModelConfig& out) const {
    out = m_config;
    out.positional = *parsePositional(m_positional);  // the flag parser allowed only valid names
    out.attention = *parseAttention(m_attention);
    out.init.scheme = *parseInitScheme(m_init);
    if (out.init.scheme != InitScheme::Normal) {
        for (const char* name : {"init-mean", "init-std"}) {
            if (flags.given(name)) {
                return std::string("--") + name + ": only used with --init normal (allowed " +
                       "with --init normal; the default init has fixed scales)";
            }
        }
    }
    const FieldErrors errors = validate(out);
    if (!errors.empty()) {
        return describe(errors.front());
    }
    return std::nullopt;
}

}  // namespace nope::cli
