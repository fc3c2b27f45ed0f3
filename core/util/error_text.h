// What a user reads of an error: its message without the C++ backtrace LibTorch appends to its
// own ("Exception raised from ... frame #0: ..."), and a plain sentence for running out of memory.
#pragma once

#include <exception>
#include <string>

namespace nope {

std::string errorText(const std::exception& e);
// The same for a message already taken out of its exception (wrapped in another one's text).
std::string withoutBacktrace(std::string message);

}  // namespace nope
