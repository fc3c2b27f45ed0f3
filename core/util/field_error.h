// A validation failure that names the offending field, so that every front end (CLI flags, the
// form, a JSON file) can point at it: the CLI prints "--<field>: <message>".
#pragma once

#include <string>
#include <vector>

namespace nope {

struct FieldError {
    std::string field;    // user-facing name, the CLI flag without "--" (e.g. "dim")
    std::string message;  // what is wrong and what is allowed
};

using FieldErrors = std::vector<FieldError>;

// "--dim: 100 is not divisible by --heads (6)"
inline std::string describe(const FieldError& e) {
    return "--" + e.field + ": " + e.message;
}

}  // namespace nope
