// The one idiom for enum <-> name conversion: a constexpr table of {value, name} per enum, and
// lookups both ways plus the joined names for messages ("none, learned, sinusoidal").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nope {

template <typename Enum>
struct EnumName {
    Enum value;
    const char* name;
};

template <typename Enum, size_t N>
std::string nameOf(const EnumName<Enum> (&table)[N], Enum value) {
    for (const auto& entry : table) {
        if (entry.value == value) {
            return entry.name;
        }
    }
    return "?";
}

template <typename Enum, size_t N>
std::optional<Enum> parseName(const EnumName<Enum> (&table)[N], std::string_view s) {
    for (const auto& entry : table) {
        if (s == entry.name) {
            return entry.value;
        }
    }
    return std::nullopt;
}

template <typename Enum, size_t N>
std::string namesJoined(const EnumName<Enum> (&table)[N]) {
    std::string out;
    for (const auto& entry : table) {
        out += (out.empty() ? "" : ", ") + std::string(entry.name);
    }
    return out;
}

}  // namespace nope
