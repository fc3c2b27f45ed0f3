// A validation failure that names the offending setting, so that every front end (CLI flags, the
// form, a JSON file) can point at it. Messages name other settings as "{name}"; the CLI renders
// them as "--name", the form as the setting's label (settings/settings.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nope {

struct FieldError {
    std::string field;    // the setting's canonical name (settings/settings.h), e.g. "dim"
    std::string message;  // what is wrong and what is allowed; "{heads}" names another setting
};

using FieldErrors = std::vector<FieldError>;

// Replaces each "{name}" in `message` (a name of lower-case letters, digits and '-') by
// `render(name)`; other braces, as in a quoted user value, stay as they are.
inline std::string renderSettingRefs(const std::string& message,
                                     const std::function<std::string(const std::string&)>& render) {
    auto isName = [](const std::string& s) {
        for (char c : s) {
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
                return false;
            }
        }
        return !s.empty();
    };
    std::string out;
    size_t pos = 0;
    while (pos < message.size()) {
        const size_t open = message.find('{', pos);
        const size_t close = open == std::string::npos ? open : message.find('}', open);
        if (close == std::string::npos) {
            out += message.substr(pos);
            break;
        }
        const std::string name = message.substr(open + 1, close - open - 1);
        out += message.substr(pos, open - pos) +
               (isName(name) ? render(name) : message.substr(open, close - open + 1));
        pos = close + 1;
    }
    return out;
}

// For the command line: "--dim: 100 is not divisible by --heads (6)"
inline std::string describe(const FieldError& e) {
    return "--" + e.field + ": " +
           renderSettingRefs(e.message, [](const std::string& name) { return "--" + name; });
}

}  // namespace nope
