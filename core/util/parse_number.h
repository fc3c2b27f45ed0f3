// Whole-text number parsing for settings, flags and form fields: nothing on failure (empty text,
// trailing characters, out of the type's range, not finite).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

namespace nope {

inline std::optional<double> parseReal(const std::string& text) {
    if (text.empty()) {
        return std::nullopt;
    }
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(v)) {
        return std::nullopt;
    }
    return v;
}

template <typename Int>
std::optional<Int> parseInteger(const std::string& text) {
    Int v{};
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
        return std::nullopt;
    }
    return v;
}

}  // namespace nope
