// File I/O with errors that name the file and the cause.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace nope {

// Writes `content` to a temporary file next to `path`, flushes it to the disk (fsync), renames it
// over `path` and flushes the folder: a reader sees the old file or the whole new one, never half
// of it, also after a crash or a power cut. Creates missing parent folders. On failure (a full
// disk, a read-only folder) the old file is untouched and the temporary one removed; throws
// std::runtime_error naming the file and the cause.
void writeFileAtomic(const std::filesystem::path& path, std::string_view content);

// Flushes a folder's entries (a rename, a removal or a new file in it) to the disk. A file system
// that cannot sync a folder is not an error; a failed sync (EIO) throws std::runtime_error naming
// the folder.
void syncFolder(const std::filesystem::path& dir);

// The whole file; throws std::runtime_error naming the file and the cause.
std::string readFile(const std::filesystem::path& path);

}  // namespace nope
