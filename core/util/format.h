// Number formatting shared by tables and files.
#pragma once

#include <cstdint>
#include <string>

namespace nope {

// Fixed-point with `decimals` digits after the point ("0.964100").
std::string fixed(double value, int decimals);
// Shortest form that reads back to the same float ("0.1", "1e-07").
std::string shortest(float value);
// Thousands separated by commas ("10,658,688").
std::string withCommas(int64_t value);
// A CSV field: as it is, or in double quotes (inner quotes doubled) when it holds a comma, a
// quote, a line break, or spaces at either end (RFC 4180).
std::string csvField(const std::string& text);
// A duration as minutes and seconds, or hours and minutes from an hour on ("3m07s", "1h02m").
std::string clockDuration(double seconds);

}  // namespace nope
