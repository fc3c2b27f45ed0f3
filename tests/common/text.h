// Text helpers of the tests.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace nope::test {

// The lines of a text, without their line breaks.
inline std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        out.push_back(line);
    }
    return out;
}

}  // namespace nope::test
