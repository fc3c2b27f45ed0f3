#include "util/files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace nope {

namespace fs = std::filesystem;

namespace {

std::runtime_error writeError(const fs::path& path, const std::string& cause) {
    return std::runtime_error("cannot write " + path.string() + ": " + cause);
}

// Writes everything to `fd`, retrying short writes and interruptions; errno on failure.
bool writeAll(int fd, std::string_view content) {
    const char* data = content.data();
    size_t left = content.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, data, left);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        data += n;
        left -= static_cast<size_t>(n);
    }
    return true;
}

}  // namespace

void writeFileAtomic(const fs::path& path, std::string_view content) {
    std::error_code ec;
    if (path.has_parent_path()) {
        const bool created = fs::create_directories(path.parent_path(), ec);
        if (ec) {
            throw std::runtime_error("cannot create folder " + path.parent_path().string() + ": " +
                                     ec.message());
        }
        if (created && path.parent_path().has_parent_path()) {
            syncFolder(path.parent_path().parent_path());  // the new folder's entry
        }
    }
    const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw writeError(path, std::strerror(errno));
    }
    const bool written = writeAll(fd, content) && ::fsync(fd) == 0;
    const int cause = errno;
    const bool closed = ::close(fd) == 0;
    if (!written || !closed) {
        const std::string message = std::strerror(written ? errno : cause);
        ::unlink(tmp.c_str());
        throw writeError(path, message);
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        ::unlink(tmp.c_str());
        throw writeError(path, ec.message());
    }
    syncFolder(path.has_parent_path() ? path.parent_path() : fs::path("."));
}

void syncFolder(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return;  // a folder that cannot be opened for reading: its files are synced
    }
    const int result = ::fsync(fd);
    const int cause = errno;
    ::close(fd);
    // file systems that cannot sync a folder say EINVAL; anything else (EIO) is a failed write
    if (result != 0 && cause != EINVAL && cause != ENOTSUP) {
        throw std::runtime_error("cannot write folder " + dir.string() + ": " +
                                 std::strerror(cause));
    }
}

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) {
        throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    return buffer.str();
}

}  // namespace nope
