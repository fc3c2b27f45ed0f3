#include "util/error_text.h"

#include <cstdio>
#include <cstdlib>
#include <new>

namespace nope {

std::string withoutBacktrace(std::string message) {
    // LibTorch: the message, then "Exception raised from <function> at <file>:<line> (most recent
    // call first):" and one "frame #N: ..." line per frame
    for (const char* start : {"Exception raised from ", "frame #0: "}) {
        const size_t at = message.find(start);
        if (at != std::string::npos) {
            message.erase(at);
        }
    }
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
        message.pop_back();
    }
    return message;
}

namespace {

constexpr const char* kOutOfMemory =
    "out of memory: the machine's memory, or this process's limit, is used up (lower the "
    "model's size, the batch or the number of prompts)";

// LibTorch's allocator failing: "... DefaultCPUAllocator: can't allocate memory: you tried to
// allocate N bytes. Error code 12 ..."
std::string outOfMemory(const std::string& message) {
    const std::string tried = "you tried to allocate ";
    const size_t at = message.find(tried);
    if (at == std::string::npos) {
        return kOutOfMemory;
    }
    const double bytes = std::strtod(message.c_str() + at + tried.size(), nullptr);
    char size[64];
    std::snprintf(size, sizeof size, "%.1f MB", bytes / 1e6);
    return std::string(kOutOfMemory) + "; an allocation of " + size + " failed";
}

}  // namespace

std::string errorText(const std::exception& e) {
    if (dynamic_cast<const std::bad_alloc*>(&e)) {
        return kOutOfMemory;
    }
    std::string text = withoutBacktrace(e.what());
    if (text.find("can't allocate memory") != std::string::npos) {
        return outOfMemory(text);
    }
    return text;
}

}  // namespace nope
