// The character vocabulary shared by every task and model: 96 characters sorted by code point,
// '\n' = 0, ' ' = 1, then '!'..'~' (so '0'..'9' = 17..26 and '=' = 30). No BOS/EOS tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nope::vocab {

inline constexpr int kSize = 96;
inline constexpr char kPad = '\n';  // left padding of prompts and the separator of examples

// True for the 96 characters of the vocabulary.
bool contains(char c);

// Token id of a character; throws std::invalid_argument for characters outside the vocabulary.
int64_t encode(char c);
std::vector<int64_t> encode(std::string_view text);

// Character of a token id; throws std::out_of_range for ids outside [0, kSize).
char decode(int64_t id);
std::string decode(const std::vector<int64_t>& ids);

// The characters of UTF-8 `text` outside the vocabulary, each named once in order of first
// appearance: "'é' (U+00E9)", "tab (U+0009)". Empty when every character is in the vocabulary.
std::vector<std::string> outside(std::string_view text);
// "the characters 'é' (U+00E9) and tab (U+0009) are not in the vocabulary (allowed: printable
// ASCII and newline)", or empty.
std::string outsideMessage(std::string_view text);

// Printable form of a character for tables and plot axes ("\n" is shown as "⏎").
std::string display(char c);

}  // namespace nope::vocab
