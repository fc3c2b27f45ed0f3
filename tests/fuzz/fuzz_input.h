// Helpers of the fuzz targets: the input as a file (the readers under test take paths), in a
// folder of this process's own under the system's temporary folder.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace nope::fuzz {

// The folder is removed when the process ends normally, so that repeated runs of the fuzz
// targets (every ctest run replays their corpus) leave nothing behind.
inline const std::filesystem::path& ownFolder() {
    struct Folder {
        std::filesystem::path path;
        Folder()
            : path(std::filesystem::temp_directory_path() /
                   ("nopescope-fuzz-" + std::to_string(::getpid()))) {
            std::filesystem::create_directories(path);
        }
        ~Folder() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    };
    static const Folder folder;
    return folder.path;
}

// Writes `bytes` to `name` in this process's folder and returns the path.
inline std::filesystem::path writeInput(const std::string& name, const std::string& bytes) {
    const auto path = ownFolder() / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
}

inline std::string asString(const uint8_t* data, size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

// "run" in this process's folder, made a run folder (a config.json) the first time, so that the
// run list reads it as well as its curves; returns its path.
inline const std::filesystem::path& runFolder() {
    static const std::filesystem::path dir = [] {
        const auto path = ownFolder() / "run";
        std::filesystem::create_directories(path);
        std::ofstream(path / "config.json") << R"({"task": "addition", "preset": "quick"})";
        return path;
    }();
    return dir;
}

// Calls each reader in turn; an exception is a reader refusing the input, which is allowed (a
// crash, a leak or a sanitizer report is a finding).
template <class... Read>
void readEach(Read&&... read) {
    const auto tolerant = [](auto&& call) {
        try {
            call();
        } catch (const std::exception&) {
        }
    };
    (tolerant(read), ...);
}

}  // namespace nope::fuzz
