// The one idiom for enum <-> name conversion: a constexpr table of {value, name} per enum, and
// lookups both ways plus the joined names for messages ("none, learned, sinusoidal").
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>
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

// The value an environment variable names (for switches read once, such as the kernels'): the
// fallback when it is unset or empty, and also, with a message on stderr naming the allowed
// values, when it names none of them.
template <typename Enum, size_t N>
Enum environmentChoice(const EnumName<Enum> (&table)[N], const char* variable, Enum fallback) {
    const char* value = std::getenv(variable);
    if (value == nullptr || *value == '\0') {
        return fallback;
    }
    if (const auto chosen = parseName(table, value)) {
        return *chosen;
    }
    std::fprintf(stderr, "%s: '%s' is not one of %s; using %s\n", variable, value,
                 namesJoined(table).c_str(), nameOf(table, fallback).c_str());
    return fallback;
}

}  // namespace nope
