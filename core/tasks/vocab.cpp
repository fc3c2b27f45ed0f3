#include "tasks/vocab.h"

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

std::string display(char c) {
    return c == '\n' ? "\u23CE" : std::string(1, c);
}

}  // namespace nope::vocab
