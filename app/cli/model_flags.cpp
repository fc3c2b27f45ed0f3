#include "cli/model_flags.h"

namespace nope::cli {

ModelFlags::ModelFlags(RunSpec* spec) : m_spec(spec ? spec : &m_own) {}

void ModelFlags::addTo(FlagSet& flags) {
    flags.addSettings(m_spec, {SettingSection::Model, SettingSection::Init});
}

std::optional<std::string> ModelFlags::build(const FlagSet& flags, ModelConfig& out) const {
    out = m_spec->model;
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
