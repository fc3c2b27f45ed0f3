// File I/O with errors that name the file and the cause.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace nope {

// Writes `content` to a temporary file next to `path`, then renames it over `path`: a reader
// sees the old file or the whole new one, never half of it. Creates missing parent folders.
// Throws std::runtime_error naming the file and the cause.
void writeFileAtomic(const std::filesystem::path& path, std::string_view content);

// The whole file; throws std::runtime_error naming the file and the cause.
std::string readFile(const std::filesystem::path& path);

}  // namespace nope
