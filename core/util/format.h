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
// A duration as minutes and seconds, or hours and minutes from an hour on ("3m07s", "1h02m").
std::string clockDuration(double seconds);

}  // namespace nope
