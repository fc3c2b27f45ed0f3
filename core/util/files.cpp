#include "util/files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

namespace nope {

namespace fs = std::filesystem;

void writeFileAtomic(const fs::path& path, std::string_view content) {
    std::error_code ec;
    if (path.has_parent_path()) {
        fs::create_directories(path.parent_path(), ec);
        if (ec) {
            throw std::runtime_error("cannot create folder " + path.parent_path().string() + ": " +
                                     ec.message());
        }
    }
    const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) {
            throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
        }
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        out.flush();
        if (!out) {
            const std::string cause = std::strerror(errno);
            out.close();
            fs::remove(tmp, ec);
            throw std::runtime_error("cannot write " + path.string() + ": " + cause);
        }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw std::runtime_error("cannot write " + path.string() + ": " + ec.message());
    }
}

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

}  // namespace nope
