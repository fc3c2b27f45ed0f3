#include "tasks/vocab.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace nope::vocab {

bool contains(char c) {
    return c == '\n' || (c >= ' ' && c <= '~');
}

int64_t encode(char c) {
    if (c == '\n') {
        return 0;
    }
    if (c >= ' ' && c <= '~') {
        return 1 + (c - ' ');
    }
    throw std::invalid_argument("character code " + std::to_string(static_cast<int>(c)) +
                                " is not in the vocabulary (printable ASCII and newline)");
}

std::vector<int64_t> encode(std::string_view text) {
    std::vector<int64_t> ids;
    ids.reserve(text.size());
    for (char c : text) {
        ids.push_back(encode(c));
    }
    return ids;
}

char decode(int64_t id) {
    if (id < 0 || id >= kSize) {
        throw std::out_of_range("token id " + std::to_string(id) + " is outside [0, 96)");
    }
    return id == 0 ? '\n' : static_cast<char>(' ' + (id - 1));
}

std::string decode(const std::vector<int64_t>& ids) {
    std::string text;
    text.reserve(ids.size());
    for (int64_t id : ids) {
        text.push_back(decode(id));
    }
    return text;
}

namespace {

// The code point starting at text[i] and its length in bytes (a stray byte counts as itself).
std::pair<uint32_t, size_t> codePoint(std::string_view text, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    const size_t length = lead < 0x80         ? 1
                          : (lead >> 5) == 6  ? 2
                          : (lead >> 4) == 14 ? 3
                          : (lead >> 3) == 30 ? 4
                                              : 1;
    if (length == 1 || i + length > text.size()) {
        return {lead, 1};
    }
    uint32_t cp = lead & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
        if ((byte(i + k) >> 6) != 2) {
            return {lead, 1};
        }
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    return {cp, length};
}

std::string nameOf(std::string_view text, size_t i, uint32_t cp, size_t length) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
    const char* control = cp == '\t' ? "tab" : cp == '\r' ? "carriage return" : nullptr;
    if (control) {
        return std::string(control) + " (" + hex + ")";
    }
    if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
        return std::string("control character (") + hex + ")";
    }
    return "'" + std::string(text.substr(i, length)) + "' (" + hex + ")";
}

}  // namespace

std::vector<std::string> outside(std::string_view text) {
    std::vector<std::string> names;
    for (size_t i = 0; i < text.size();) {
        const auto [cp, length] = codePoint(text, i);
        if (!(cp < 0x80 && contains(static_cast<char>(cp)))) {
            std::string name = nameOf(text, i, cp, length);
            if (std::find(names.begin(), names.end(), name) == names.end()) {
                names.push_back(std::move(name));
            }
        }
        i += length;
    }
    return names;
}

std::string outsideMessage(std::string_view text) {
    const auto names = outside(text);
    if (names.empty()) {
        return {};
    }
    std::string list;
    for (size_t i = 0; i < names.size(); ++i) {
        list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    }
    return (names.size() == 1 ? "the character " + list + " is"
                              : "the characters " + list + " are") +
           " not in the vocabulary (allowed: printable ASCII and newline)";
}

std::string display(char c) {
    return c == '\n' ? "\u23CE" : std::string(1, c);
}

}  // namespace nope::vocab
